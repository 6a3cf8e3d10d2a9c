// The token guard: it guards the state-changing endpoints of the admin
// listener (a rebuild, a snapshot, ...) with one bearer token read from a
// file. Without a token file those endpoints are off: they answer 403 to
// everyone. The probes and metrics (/livez, /readyz, /metrics) are not
// guarded: the caller mounts only the state-changing routes behind Require.
//
// The token is compared in constant time (of its SHA-256 digest, so that
// not even its length leaks) and never logged.

package admin

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// MinTokenLength is the shortest token accepted, in bytes: a guessable admin
// token is refused at start-up rather than trusted.
const MinTokenLength = 16

// TokenGuard checks the bearer token of admin requests. The zero value (and
// Off) is a guard with no token: every guarded request is refused.
type TokenGuard struct {
	sum    [sha256.Size]byte
	on     bool
	logger *slog.Logger
}

// TokenGuardOff returns a guard that refuses every request: the state-changing
// endpoints are off.
func TokenGuardOff() *TokenGuard { return &TokenGuard{} }

// NewTokenGuard returns a guard that accepts the bearer token token (surrounding
// white space removed). It fails for a token shorter than MinLength or
// holding white space or control characters inside. Refusals are logged
// to logger (nil: not logged), without the token.
func NewTokenGuard(token []byte, logger *slog.Logger) (*TokenGuard, error) {
	t := bytes.TrimSpace(token)
	if len(t) < MinTokenLength {
		return nil, fmt.Errorf("admin token: %d bytes, want at least %d", len(t), MinTokenLength)
	}
	if bytes.ContainsFunc(t, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, errors.New("admin token: holds white space or control characters")
	}
	return &TokenGuard{sum: sha256.Sum256(t), on: true, logger: logger}, nil
}

// LoadTokenGuard returns the guard of the token in the file path (see New), or Off
// when path is "" (no token file configured); the error names the file,
// never its content.
func LoadTokenGuard(path string, logger *slog.Logger) (*TokenGuard, error) {
	if path == "" {
		return TokenGuardOff(), nil
	}
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("admin token file: %w", err)
	}
	g, err := NewTokenGuard(b, logger)
	if err != nil {
		return nil, fmt.Errorf("admin token file %s: %w", path, err)
	}
	return g, nil
}

// Enabled reports whether the guarded endpoints are on (a token is set).
func (g *TokenGuard) Enabled() bool { return g != nil && g.on }

// Require returns next guarded: 403 while the guard is off, 401 (with a
// WWW-Authenticate challenge) without the right bearer token, next
// otherwise.
func (g *TokenGuard) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if !g.Enabled() {
			g.refuse(r, "admin endpoints off")
			http.Error(w, "admin endpoints are off: set LOOKUP_ADMIN_TOKEN_FILE", http.StatusForbidden)
			return
		}
		if !g.accepts(r.Header.Get("Authorization")) {
			g.refuse(r, "missing or wrong admin token")
			w.Header().Set("WWW-Authenticate", `Bearer realm="lookupd-admin"`)
			http.Error(w, "unauthorized: send the admin token as a bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// accepts reports whether the Authorization header value carries the token.
func (g *TokenGuard) accepts(authz string) bool {
	scheme, tok, ok := strings.Cut(authz, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], g.sum[:]) == 1
}

func (g *TokenGuard) refuse(r *http.Request, why string) {
	if g == nil || g.logger == nil {
		return
	}
	g.logger.Warn("admin request refused", "reason", why, "method", r.Method, "path", r.URL.Path, "remote_addr", r.RemoteAddr)
}
