package loadtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for "lookupd token" (see
// TestMintTokens): with LOADTEST_FAKE_LOOKUPD set it prints --count fake
// tokens and its arguments on stderr, then exits.
func TestMain(m *testing.M) {
	if os.Getenv("LOADTEST_FAKE_LOOKUPD") != "" {
		args := os.Args[1:]
		n := 1
		if i := slices.Index(args, "--count"); i >= 0 && i+1 < len(args) {
			n, _ = strconv.Atoi(args[i+1])
		}
		if os.Getenv("LOADTEST_FAKE_LOOKUPD") == "fail" {
			fmt.Fprintln(os.Stderr, "dev key: no such file")
			os.Exit(1)
		}
		for i := range n {
			fmt.Printf("h.%s-%d.s\n", strings.ReplaceAll(strings.Join(args, "_"), ".", ","), i)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestMintTokens(t *testing.T) {
	t.Run("runs lookupd token with the key, scopes, ttl and count", func(t *testing.T) {
		t.Setenv("LOADTEST_FAKE_LOOKUPD", "1")
		toks, err := MintTokens(context.Background(), os.Args[0], "/k/dev-key.pem", "read:persons read:persons:ssn", time.Hour, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(toks) != 3 {
			t.Fatalf("got %d tokens, want 3", len(toks))
		}
		for _, want := range []string{"token_", "--key_/k/dev-key,pem_", "--scope_read:persons read:persons:ssn_", "--ttl_1h0m0s_", "--count_3"} {
			if !strings.Contains(toks[0], want) {
				t.Errorf("lookupd ran as %q, want %q in its arguments", toks[0], want)
			}
		}
	})
	t.Run("failure names stderr", func(t *testing.T) {
		t.Setenv("LOADTEST_FAKE_LOOKUPD", "fail")
		_, err := MintTokens(context.Background(), os.Args[0], "/k", "read:persons", time.Hour, 1)
		if err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("err = %v, want lookupd's stderr in it", err)
		}
	})
}

func TestParseTokens(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		n       int
		wantErr string
	}{
		{name: "n distinct", out: "a.b.c\nd.e.f\n", n: 2},
		{name: "blank lines ignored", out: "\na.b.c\n\n", n: 1},
		{name: "too few", out: "a.b.c\n", n: 2, wantErr: "got 1 tokens, want 2"},
		{name: "repeated", out: "a.b.c\na.b.c\n", n: 2, wantErr: "token 2 repeats"},
		{name: "not a JWS", out: "usage: lookupd\n", n: 1, wantErr: "not a compact JWS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks, err := parseTokens([]byte(tt.out), tt.n)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(toks) != tt.n {
				t.Fatalf("got %d tokens, %v; want %d", len(toks), err, tt.n)
			}
		})
	}
}

// TestCreateKeyIn: the key is made in dir by lookupd token and its JWKS
// (what lookupd printed) written beside it, readable by the user only.
func TestCreateKeyIn(t *testing.T) {
	t.Setenv("LOADTEST_FAKE_LOOKUPD", "1")
	dir := t.TempDir()
	keyPath, jwksPath, err := CreateKeyIn(context.Background(), os.Args[0], dir)
	if err != nil {
		t.Fatal(err)
	}
	if keyPath != filepath.Join(dir, "key.pem") || jwksPath != filepath.Join(dir, "jwks.json") {
		t.Errorf("got %s and %s, want key.pem and jwks.json in %s", keyPath, jwksPath, dir)
	}
	fi, err := os.Stat(jwksPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(jwksPath)
	if want := "--create_--print-jwks"; !strings.Contains(string(b), want) || fi.Mode().Perm() != 0o600 {
		t.Errorf("JWKS file %q (mode %v), want lookupd's output with %q, mode 0600", b, fi.Mode().Perm(), want)
	}
}
