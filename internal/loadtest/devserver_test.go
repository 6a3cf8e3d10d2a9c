package loadtest

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// banner is the shape of the banner of "lookupd dev" (cmd/lookupd's
// TestLoadtestParsesDevBanner checks the real one).
const banner = `
lookupd dev is ready.

  API     http://127.0.0.1:41234   (OpenAPI document: http://127.0.0.1:41234/openapi.yaml)
  admin   http://127.0.0.1:41235   (/livez /readyz /metrics /.well-known/jwks.json)
  NATS    nats://127.0.0.1:41236   (stream PERSONS)
  data    /tmp/lt/dev

A token valid for 12h with scopes "read:persons read:persons:ssn":

export TOKEN='aaa.bbb.ccc'

More tokens this server accepts, from the repository:
  go run ./cmd/lookupd token --key %s --scope read:persons --ttl 1h
Stop with Ctrl-C.
`

func TestParseBanner(t *testing.T) {
	beforeNATS, _, _ := strings.Cut(banner, "  NATS")
	tests := []struct {
		name    string
		in      string
		want    Banner
		wantErr error
	}{
		{
			name: "complete",
			in:   strings.Replace(banner, "%s", "/tmp/lt/dev/dev-key.pem", 1),
			want: Banner{API: "http://127.0.0.1:41234", Admin: "http://127.0.0.1:41235", NATS: "nats://127.0.0.1:41236",
				Stream: "PERSONS", KeyPath: "/tmp/lt/dev/dev-key.pem"},
		},
		{
			name: "quoted key path",
			in:   strings.Replace(banner, "%s", `'/tmp/it'\''s here/dev-key.pem'`, 1),
			want: Banner{API: "http://127.0.0.1:41234", Admin: "http://127.0.0.1:41235", NATS: "nats://127.0.0.1:41236",
				Stream: "PERSONS", KeyPath: "/tmp/it's here/dev-key.pem"},
		},
		{
			name:    "cut short",
			in:      beforeNATS,
			want:    Banner{API: "http://127.0.0.1:41234", Admin: "http://127.0.0.1:41235"},
			wantErr: io.ErrUnexpectedEOF,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBanner(strings.NewReader(tt.in))
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"short", []string{"ab", "cd"}, "abcd"},
		{"exactly full", []string{"abcd", "efgh"}, "abcdefgh"},
		{"wrapped", []string{"abcdef", "ghij"}, "cdefghij"},
		{"one write longer than the ring", []string{"x", "0123456789"}, "23456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTail(8)
			for _, w := range tt.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := tl.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
