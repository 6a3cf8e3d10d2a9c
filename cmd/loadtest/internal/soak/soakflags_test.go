package soak

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(so Options) bool
		wantErr string
	}{
		{name: "soak defaults: issue 9's sizes", args: []string{"--soak", "10m"}, check: func(so Options) bool {
			return so.duration == 10*time.Minute && so.people == 1000000 && so.signers == 1000000 &&
				so.rate == 2000 && so.events == 2000 && so.interval == 10*time.Second && len(so.serveFlags) == 0
		}},
		{name: "soak flags", args: []string{"--soak", "5m", "--soak-people", "500000", "--soak-signers", "0", "--soak-events", "0",
			"--soak-serve-flags", "--memory-budget '256MiB'"}, check: func(so Options) bool {
			return so.duration == 5*time.Minute && so.people == 500000 && so.signers == 0 && so.events == 0 &&
				strings.Join(so.serveFlags, "|") == "--memory-budget|256MiB"
		}},
		{name: "soak without people", args: []string{"--soak", "1m", "--soak-people", "0"}, wantErr: "--soak-people must be at least 1"},
		{name: "soak without lookups", args: []string{"--soak", "1m", "--soak-rate", "0"}, wantErr: "--soak-rate must be at least 1"},
		{name: "soak interval", args: []string{"--soak", "1m", "--soak-interval", "0s"}, wantErr: "--soak-interval must be positive"},
		{name: "negative soak", args: []string{"--soak", "-1m"}, wantErr: "must not be negative"},
		{name: "soak serve flags unquoted", args: []string{"--soak", "1m", "--soak-serve-flags", "--a 'b"}, wantErr: "--soak-serve-flags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var so Options
			serveFlags, limit := Flags(fs, &so)
			err := fs.Parse(tt.args)
			if err == nil {
				err = Check(&so, *serveFlags, *limit)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(so) {
				t.Errorf("options %+v do not match the flags %q", so, tt.args)
			}
		})
	}
}
