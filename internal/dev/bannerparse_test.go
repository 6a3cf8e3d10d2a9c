package dev_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/loadtest"
)

// TestLoadtestParsesDevBanner keeps "make loadtest" (loadtest),
// which reads the banner of "lookupd dev" for its addresses and key, in
// step with the banner.
func TestLoadtestParsesDevBanner(t *testing.T) {
	data, err := dev.NewDemoData()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		keyPath string
	}{
		{"plain key path", "/tmp/lookupd-loadtest-1/dev/dev-key.pem"},
		{"key path that needs quoting", "/tmp/it's a dir/dev-key.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			dev.WriteBanner(&out, dev.Banner{
				API: dev.HTTPURL("127.0.0.1:41234"), Admin: dev.HTTPURL("127.0.0.1:41235"), NATS: "nats://127.0.0.1:41236",
				Stream: "PERSONS", DataDir: "/tmp/d", Temp: false, KeyPath: tt.keyPath, Token: "aaa.bbb.ccc",
				TTL: time.Hour, Demo: data, MoreTokens: dev.MoreTokensCommand(dev.TokenFlags{KeyPath: tt.keyPath}),
			})
			got, err := loadtest.ParseBanner(strings.NewReader(out.String()))
			if err != nil {
				t.Fatalf("ParseBanner: %v", err)
			}
			want := loadtest.Banner{API: "http://127.0.0.1:41234", Admin: "http://127.0.0.1:41235",
				NATS: "nats://127.0.0.1:41236", Stream: "PERSONS", KeyPath: tt.keyPath}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}
