// HTTPGet: it sends the GET requests of tests and of the load tools
// (loadtest, the balancer) against a running server: a bearer token and
// headers in; the status, the headers and the whole body out.

package testkit

import (
	"io"
	"net/http"
)

// HTTPResponse is an answer whose body has been read whole (and closed).
type HTTPResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// HTTPGet sends GET url with client (nil: http.DefaultClient), the bearer
// token (no Authorization header when token is "") and headers, and
// returns the answer. The error is that of the request or of reading the
// body.
func HTTPGet(client *http.Client, url, token string, headers map[string]string) (HTTPResponse, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return HTTPResponse{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return HTTPResponse{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return HTTPResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}, err
}
