package loadtest

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/lookup/persons/internal/testing/testkit"
)

// Response is one captured answer.
type Response = testkit.HTTPResponse

// Get sends GET rawURL with token as a bearer token (none when "") and
// returns the answer, or an error when it is not 200 OK.
func Get(c *http.Client, rawURL, token string) (Response, error) {
	r, err := testkit.HTTPGet(c, rawURL, token, nil)
	if err != nil {
		return Response{}, err
	}
	if r.Status != http.StatusOK {
		path := rawURL
		if u, err := url.Parse(rawURL); err == nil {
			path = u.Path
		}
		return Response{}, fmt.Errorf("GET %s: %d %s", path, r.Status, http.StatusText(r.Status))
	}
	return r, nil
}
