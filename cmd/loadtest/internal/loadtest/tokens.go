package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MintTokens returns n distinct tokens that the dev server signing with
// the key at keyPath accepts, minted by bin ("lookupd token --count n", the
// code path of the dev server's own token), with the given scopes and
// lifetime. The tokens stay in memory: nothing is written to a file.
func MintTokens(ctx context.Context, bin, keyPath, scope string, ttl time.Duration, n int) ([]string, error) {
	out, err := runToken(ctx, bin, "--key", keyPath, "--scope", scope,
		"--ttl", ttl.String(), "--sub", "loadtest", "--count", strconv.Itoa(n))
	if err != nil {
		return nil, err
	}
	return parseTokens(out, n)
}

// parseTokens splits the output of "lookupd token --count n" into its n
// tokens, checking that there are n, distinct, each a compact JWS.
func parseTokens(out []byte, n int) ([]string, error) {
	toks := make([]string, 0, n)
	seen := make(map[string]bool, n)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 16<<10), 1<<20)
	for sc.Scan() {
		tok := strings.TrimSpace(sc.Text())
		if tok == "" {
			continue
		}
		if strings.Count(tok, ".") != 2 {
			return nil, fmt.Errorf("token %d is not a compact JWS", len(toks)+1)
		}
		if seen[tok] {
			return nil, fmt.Errorf("token %d repeats an earlier one", len(toks)+1)
		}
		seen[tok] = true
		toks = append(toks, tok)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(toks) != n {
		return nil, fmt.Errorf("got %d tokens, want %d", len(toks), n)
	}
	return toks, nil
}

// CreateKey creates (when missing) the RSA dev key at keyPath with bin
// ("lookupd token --create --print-jwks") and returns the JWKS of its
// public half, for a "lookupd serve" that is to accept the tokens
// MintTokens signs with it (issuer and audience of "lookupd dev").
func CreateKey(ctx context.Context, bin, keyPath string) ([]byte, error) {
	return runToken(ctx, bin, "--key", keyPath, "--create", "--print-jwks")
}

// CreateKeyIn creates the key key.pem in dir (CreateKey) and writes its
// JWKS beside it, jwks.json (private to the user); it returns both paths.
func CreateKeyIn(ctx context.Context, bin, dir string) (keyPath, jwksPath string, err error) {
	keyPath, jwksPath = filepath.Join(dir, "key.pem"), filepath.Join(dir, "jwks.json")
	jwks, err := CreateKey(ctx, bin, keyPath)
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(jwksPath, jwks, 0o600); err != nil {
		return "", "", err
	}
	return keyPath, jwksPath, nil
}

// runToken runs "bin token args..." with LookupdEnv and returns its
// standard output; its error carries the command's standard error.
func runToken(ctx context.Context, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"token"}, args...)...) //nolint:gosec // G204: bin is the lookupd binary the operator named
	cmd.Env = LookupdEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s token: %w: %s", bin, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
