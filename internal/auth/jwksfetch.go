package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrJWKSInsecureURL is returned (wrapped) by NewJWKSFromURL for a plain
// http:// URL to a host that is not a loopback address, unless
// WithJWKSAllowHTTP allows it.
var ErrJWKSInsecureURL = errors.New("a JWKS URL must be https:// (plain http:// only to a loopback host, or when allowed explicitly)")

// errOtherOrigin refuses a redirect of a JWKS fetch to another origin.
var errOtherOrigin = errors.New("redirect to another origin refused")

// maxJWKSRedirects bounds the redirects of one JWKS fetch.
const maxJWKSRedirects = 5

// checkJWKSURL checks that rawURL may be fetched for keys and returns its
// origin (scheme and host). Errors name the URL as shown (redacted).
func checkJWKSURL(rawURL, shown string, allowHTTP bool) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("jwks url %q: invalid URL", shown)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !allowHTTP && !isLoopbackHost(u.Hostname()) {
			return nil, fmt.Errorf("jwks url %q: %w", shown, ErrJWKSInsecureURL)
		}
	default:
		return nil, fmt.Errorf("jwks url %q: %w", shown, ErrJWKSInsecureURL)
	}
	return &url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host)}, nil
}

// isLoopbackHost reports whether host is "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOriginClient returns a copy of client (nil: one with a 10 second
// timeout) that follows redirects only within origin.
func sameOriginClient(client *http.Client, origin *url.URL) *http.Client {
	var c http.Client
	if client != nil {
		c = *client
	} else {
		c.Timeout = jwksFetchTimeout
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxJWKSRedirects {
			return fmt.Errorf("more than %d redirects", maxJWKSRedirects)
		}
		if !strings.EqualFold(req.URL.Scheme, origin.Scheme) || !strings.EqualFold(req.URL.Host, origin.Host) {
			return errOtherOrigin
		}
		return nil
	}
	return &c
}

// fetchKeySet fetches and parses the JWKS at rawURL. Its errors name the
// URL as shown (redacted) and hold no part of the document.
func fetchKeySet(ctx context.Context, client *http.Client, rawURL, shown string) (*keySet, error) {
	ctx, cancel := context.WithTimeout(ctx, jwksFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks url %q: invalid URL", shown)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := client.Do(req)
	if err != nil {
		// A *url.Error repeats the URL, query included: keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("jwks url %q: %w", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks url %q: unexpected status %s", shown, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jwks url %q: reading the answer: %w", shown, err)
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("jwks url %q: larger than %d bytes", shown, maxJWKSBytes)
	}
	ks, err := parseKeySet(b)
	if errors.Is(err, ErrNoUsableKeys) {
		return nil, fmt.Errorf("jwks url %q: %w", shown, err)
	}
	if err != nil {
		// The parser's detail may quote the document; say only what failed.
		return nil, fmt.Errorf("jwks url %q: invalid JWKS document", shown)
	}
	return ks, nil
}
