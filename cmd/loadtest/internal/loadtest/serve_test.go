package loadtest

import (
	"strings"
	"testing"
)

func TestParseListening(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		want, addr string
		ok         bool
	}{
		{name: "api", line: `{"time":"2026-11-23T10:00:00Z","level":"INFO","msg":"listening","listener":"api","addr":"127.0.0.1:41234"}` + "\n",
			want: "api", addr: "127.0.0.1:41234", ok: true},
		{name: "admin", line: `{"level":"INFO","msg":"listening","listener":"admin","addr":"127.0.0.1:41235"}`,
			want: "admin", addr: "127.0.0.1:41235", ok: true},
		{name: "another message", line: `{"level":"INFO","msg":"starting lookupd serve","http_addr":"listening"}`},
		{name: "no address", line: `{"msg":"listening","listener":"api"}`},
		{name: "text log", line: `time=... level=INFO msg=listening listener=api addr=127.0.0.1:1`},
		{name: "not JSON", line: `"listening" {`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, addr, ok := parseListening([]byte(tt.line))
			if name != tt.want || addr != tt.addr || ok != tt.ok {
				t.Errorf("parseListening = %q, %q, %v; want %q, %q, %v", name, addr, ok, tt.want, tt.addr, tt.ok)
			}
		})
	}
}

// TestScanListeners: the addresses come as soon as both are known, the
// whole log is copied, and a log that ends first sends what it had.
func TestScanListeners(t *testing.T) {
	const api = `{"msg":"listening","listener":"api","addr":"127.0.0.1:1"}` + "\n"
	const admin = `{"msg":"listening","listener":"admin","addr":"127.0.0.1:2"}` + "\n"
	tests := []struct {
		name string
		log  string
		want map[string]string
	}{
		{name: "both", log: "a\n" + api + admin + "b\n", want: map[string]string{"api": "127.0.0.1:1", "admin": "127.0.0.1:2"}},
		{name: "ends first", log: api + "exit", want: map[string]string{"api": "127.0.0.1:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs strings.Builder
			found := make(chan map[string]string, 1)
			scanListeners(strings.NewReader(tt.log), &logs, found)
			got := <-found
			if len(got) != len(tt.want) || got["api"] != tt.want["api"] || got["admin"] != tt.want["admin"] {
				t.Errorf("found %v, want %v", got, tt.want)
			}
			if logs.String() != tt.log {
				t.Errorf("copied %q, want the whole log %q", logs.String(), tt.log)
			}
		})
	}
}
