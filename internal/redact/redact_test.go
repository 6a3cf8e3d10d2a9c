package redact

import (
	"fmt"
	"strings"
	"testing"
)

// checkRedacted fails t unless got, what call returned, is want and
// holds none of the credentials the inputs carry.
func checkRedacted(t *testing.T, call, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", call, got, want)
	}
	for _, secret := range []string{"s3cret", "s3cr3tT0ken", "abc"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s = %q still carries %q", call, got, secret)
		}
	}
}

func TestURL(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "https://idp.example/jwks.json", "https://idp.example/jwks.json"},
		{"user and password", "http://user:s3cret@host/jwks.json", "http://host/jwks.json"},
		{"user alone (a token)", "nats://s3cr3tT0ken@127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"query", "http://host/jwks.json?token=abc", "http://host/jwks.json?redacted"},
		{"empty query", "http://host/jwks.json?", "http://host/jwks.json?redacted"},
		{"all of it", "http://user:s3cret@host/jwks.json?token=abc#frag", "http://host/jwks.json?redacted"},
		{"fragment", "http://host/jwks.json#s3cret", "http://host/jwks.json"},
		{"unparseable with a token", "nats://s3cr3tT0ken@127.0.0.1:bad port", "nats://127.0.0.1:bad port"},
		{"unparseable with a query", "http://u:s3cret@h:x/p?token=abc", "http://h:x/p?redacted"},
		{"unparseable with a fragment", "http://u:s3cret@h:x/p#s3cret", "http://h:x/p"},
		{"no scheme, token", "s3cr3tT0ken@127.0.0.1:4222", "127.0.0.1:4222"},
		{"opaque, scrubbed by hand", "nats:s3cr3tT0ken@host", "host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRedacted(t, fmt.Sprintf("URL(%q)", tt.in), URL(tt.in), tt.want)
		})
	}
}

func TestURLs(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"one", "nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"user and password", "nats://user:s3cret@n1:4222,nats://n2:4222", "nats://n1:4222,nats://n2:4222"},
		{"token, spaces and a query", "nats://s3cr3tT0ken@n1:4222, nats://n2:4222?token=abc", "nats://n1:4222,nats://n2:4222?redacted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRedacted(t, fmt.Sprintf("URLs(%q)", tt.in), URLs(tt.in), tt.want)
		})
	}
}
