package query

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

// The JWKS tuning defaults.
const (
	// defaultJWKSRefresh is how often a JWKS fetched from a URL is refreshed
	// in the background.
	defaultJWKSRefresh = 10 * time.Minute
	// defaultJWKSMinRefetch is the least time between two fetches triggered
	// by tokens that name an unknown kid.
	defaultJWKSMinRefetch = 30 * time.Second
	// maxJWKSBytes bounds the size of a JWKS document.
	maxJWKSBytes = 1 << 20
	// minRSABits is the smallest RSA modulus accepted for verification.
	minRSABits = 2048
)

// ErrNoUsableKeys is returned (wrapped) when a JWKS holds no key that can
// verify tokens under the accepted algorithms.
var ErrNoUsableKeys = errors.New("jwks: no usable verification key (want RSA >= 2048 bits, EC P-256/P-384 or Ed25519, not marked for encryption)")

// JWKS is a set of public keys that verify access tokens. It is safe for
// concurrent use. A JWKS made by NewJWKSFromURL is refreshed in the
// background and refetched when a token names a key id it does not hold.
//
// Only asymmetric keys are kept: RSA keys of at least 2048 bits, EC keys on
// P-256 or P-384, and Ed25519 keys. Symmetric ("oct") keys, keys whose "use"
// is not "sig" and keys whose "key_ops" lack "verify" are ignored. Each key
// verifies only the algorithms its type allows (RSA: RS256, RS384, RS512,
// PS256; EC P-256: ES256; EC P-384: ES384; Ed25519: EdDSA), narrowed to the
// key's own "alg" when it has one.
type JWKS struct {
	set atomic.Pointer[keySet]

	// fetch is nil for a static (file) key set.
	fetch      func(ctx context.Context) (*keySet, error)
	minRefetch time.Duration
	now        func() time.Time

	mu        sync.Mutex // serialises fetches; guards lastFetch and fetches
	lastFetch time.Time
	fetches   int

	// log receives refresh failures (URL sets only); url is the set's URL
	// as logged: without credentials or query.
	log *slog.Logger
	url string

	// stopped is closed when the background refresh ends (URL sets only).
	stopped chan struct{}
}

// keySet is an immutable, parsed key set.
type keySet struct {
	byKID map[string][]verifyKey
	all   []verifyKey
}

// verifyKey is one public key with the algorithms it may verify.
type verifyKey struct {
	kid  string
	algs []jwa.SignatureAlgorithm
	key  any // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

func (k verifyKey) allows(alg jwa.SignatureAlgorithm) bool {
	for _, a := range k.algs {
		if a == alg {
			return true
		}
	}
	return false
}

// LoadJWKSFile reads a JWKS (a JSON Web Key Set, or a single JWK) from the
// file at path. It returns an error naming the file if the file is missing
// or unreadable, is not a valid JWKS, or holds no usable verification key
// (then the error wraps ErrNoUsableKeys).
func LoadJWKSFile(path string) (*JWKS, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("jwks file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jwks file %s: %w", path, err)
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("jwks file %s: larger than %d bytes", path, maxJWKSBytes)
	}
	ks, err := parseKeySet(b)
	if err != nil {
		return nil, fmt.Errorf("jwks file %s: %w", path, err)
	}
	j := &JWKS{now: time.Now}
	j.set.Store(ks)
	return j, nil
}

// NewJWKSFromURL fetches the JWKS at url with client (nil means a client
// with a 10 second timeout), keeps it cached and refreshes it in the
// background every 10 minutes until ctx is done. A token naming a key id
// that the set does not hold triggers a refetch, at most one every 30
// seconds. A failed refresh keeps the keys already held and is logged at
// Warn to the logger of WithJWKSLogger (the URL without credentials or
// query; never key material).
//
// It returns an error naming the URL (without credentials or query) if the
// first fetch fails, the answer is not a 200 with a valid JWKS, or the set
// holds no usable key (then the error wraps ErrNoUsableKeys).
func NewJWKSFromURL(ctx context.Context, url string, client *http.Client, opts ...JWKSOption) (*JWKS, error) {
	var t jwksTuning
	for _, o := range opts {
		o(&t)
	}
	return newJWKSFromURL(ctx, url, client, t)
}

// JWKSOption configures NewJWKSFromURL.
type JWKSOption func(*jwksTuning)

// WithJWKSLogger makes a URL key set log its failed refreshes (background
// or triggered by an unknown kid) to log at Warn. Without it they are not
// logged.
func WithJWKSLogger(log *slog.Logger) JWKSOption {
	return func(t *jwksTuning) { t.log = log }
}

// WithJWKSRefreshInterval sets how often a URL key set is refreshed in the
// background (default 10 minutes; d <= 0 keeps the default).
func WithJWKSRefreshInterval(d time.Duration) JWKSOption {
	return func(t *jwksTuning) { t.refresh = d }
}

// jwksTuning overrides the URL JWKS timings (zero values mean defaults).
type jwksTuning struct {
	refresh    time.Duration
	minRefetch time.Duration
	now        func() time.Time
	log        *slog.Logger
}

func newJWKSFromURL(ctx context.Context, rawURL string, client *http.Client, t jwksTuning) (*JWKS, error) {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	if t.refresh <= 0 {
		t.refresh = defaultJWKSRefresh
	}
	if t.minRefetch <= 0 {
		t.minRefetch = defaultJWKSMinRefetch
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	shown := RedactURL(rawURL)
	j := &JWKS{
		fetch:      func(ctx context.Context) (*keySet, error) { return fetchKeySet(ctx, client, rawURL, shown) },
		minRefetch: t.minRefetch,
		now:        t.now,
		stopped:    make(chan struct{}),
		log:        t.log,
		url:        shown,
	}
	if err := j.refresh(ctx); err != nil {
		return nil, err
	}
	go j.refreshLoop(ctx, t.refresh)
	return j, nil
}

// RedactURL returns raw fit for a log line or an error message: without
// its user information (a user alone, such as a token, as well as
// user:password), with a query replaced by "redacted", and without a
// fragment. A raw that does not parse as a URL is scrubbed the same way
// by hand (everything between "://" and the last "@" of the authority is
// dropped, and everything after "?" or "#"), so that no credential it
// carries is shown either. The program's URLs reach logs only through it.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return scrubURL(raw)
	}
	u.User = nil
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery = "redacted"
	}
	u.ForceQuery = false
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// scrubURL is RedactURL for a raw that does not parse as a URL.
func scrubURL(raw string) string {
	s, query := raw, false
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		query = s[i] == '?'
		s = s[:i]
	}
	rest, scheme := s, ""
	if i := strings.Index(s, "://"); i >= 0 {
		scheme, rest = s[:i+3], s[i+3:]
	}
	auth, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		auth, path = rest[:i], rest[i:]
	}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	s = scheme + auth + path
	if query {
		s += "?redacted"
	}
	return s
}

func (j *JWKS) refreshLoop(ctx context.Context, every time.Duration) {
	defer close(j.stopped)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// A failure keeps the current keys; the next tick tries again.
			if err := j.refresh(ctx); err != nil && ctx.Err() == nil {
				j.logFailure(ctx, "background", err)
			}
		}
	}
}

// refresh fetches the key set now and installs it on success.
func (j *JWKS) refresh(ctx context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.fetchLocked(ctx)
}

func (j *JWKS) fetchLocked(ctx context.Context) error {
	j.lastFetch = j.now()
	j.fetches++
	ks, err := j.fetch(ctx)
	if err != nil {
		return err
	}
	j.set.Store(ks)
	return nil
}

// candidates returns the keys that may verify a token signed with alg and
// naming kid ("" when the token names none). On an unknown kid a URL key
// set is refetched, unless it was fetched less than minRefetch ago.
func (j *JWKS) candidates(ctx context.Context, kid string, alg jwa.SignatureAlgorithm) []verifyKey {
	ks := j.set.Load()
	if kid == "" {
		return filterAlg(ks.all, alg)
	}
	if keys, ok := ks.byKID[kid]; ok || j.fetch == nil {
		return filterAlg(keys, alg)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	// Another request may have refetched while this one waited.
	if keys, ok := j.set.Load().byKID[kid]; ok {
		return filterAlg(keys, alg)
	}
	if j.now().Sub(j.lastFetch) < j.minRefetch {
		return nil
	}
	if err := j.fetchLocked(ctx); err != nil {
		if ctx.Err() == nil {
			j.logFailure(ctx, "unknown kid", err)
		}
		return nil
	}
	return filterAlg(j.set.Load().byKID[kid], alg)
}

// logFailure logs a failed refresh of a URL key set. err comes from
// fetchKeySet: it names the redacted URL and never holds key material.
func (j *JWKS) logFailure(ctx context.Context, trigger string, err error) {
	j.log.LogAttrs(ctx, slog.LevelWarn, "JWKS refresh failed; keeping the keys held",
		slog.String("url", j.url), slog.String("trigger", trigger), slog.String("error", err.Error()))
}

func filterAlg(keys []verifyKey, alg jwa.SignatureAlgorithm) []verifyKey {
	var out []verifyKey
	for _, k := range keys {
		if k.allows(alg) {
			out = append(out, k)
		}
	}
	return out
}

// fetchKeySet fetches and parses the JWKS at rawURL. Its errors name the
// URL as shown (redacted) and hold no part of the document.
func fetchKeySet(ctx context.Context, client *http.Client, rawURL, shown string) (*keySet, error) {
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

// The accepted signature algorithms (docs/api.md).
var (
	rsaAlgs = []jwa.SignatureAlgorithm{jwa.RS256(), jwa.RS384(), jwa.RS512(), jwa.PS256()}
)

// parseKeySet parses a JWKS document and keeps its usable verification keys.
func parseKeySet(b []byte) (*keySet, error) {
	set, err := jwk.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("invalid JWKS: %w", err)
	}
	ks := &keySet{byKID: map[string][]verifyKey{}}
	for i := 0; i < set.Len(); i++ {
		k, _ := set.Key(i)
		vk, ok := usableKey(k)
		if !ok {
			continue
		}
		ks.all = append(ks.all, vk)
		if vk.kid != "" {
			ks.byKID[vk.kid] = append(ks.byKID[vk.kid], vk)
		}
	}
	if len(ks.all) == 0 {
		return nil, ErrNoUsableKeys
	}
	return ks, nil
}

// usableKey derives the algorithms k may verify from its type and curve,
// narrowed by its own alg, and reports false if k cannot verify any
// accepted algorithm.
func usableKey(k jwk.Key) (verifyKey, bool) {
	if use, ok := k.KeyUsage(); ok && use != "sig" {
		return verifyKey{}, false
	}
	if ops, ok := k.KeyOps(); ok {
		verify := false
		for _, op := range ops {
			if op == jwk.KeyOpVerify {
				verify = true
			}
		}
		if !verify {
			return verifyKey{}, false
		}
	}
	pub, err := k.PublicKey()
	if err != nil {
		return verifyKey{}, false
	}
	var raw any
	if err := jwk.Export(pub, &raw); err != nil {
		return verifyKey{}, false
	}
	var algs []jwa.SignatureAlgorithm
	switch key := raw.(type) {
	case *rsa.PublicKey:
		if key.N.BitLen() < minRSABits {
			return verifyKey{}, false
		}
		algs = rsaAlgs
	case *ecdsa.PublicKey:
		switch key.Curve.Params().Name {
		case "P-256":
			algs = []jwa.SignatureAlgorithm{jwa.ES256()}
		case "P-384":
			algs = []jwa.SignatureAlgorithm{jwa.ES384()}
		default:
			return verifyKey{}, false
		}
	case ed25519.PublicKey:
		algs = []jwa.SignatureAlgorithm{jwa.EdDSA()}
	default:
		return verifyKey{}, false
	}
	if a, ok := k.Algorithm(); ok {
		// The key's own alg narrows the algorithms to that one, if allowed.
		var narrowed []jwa.SignatureAlgorithm
		for _, cand := range algs {
			if cand.String() == a.String() {
				narrowed = append(narrowed, cand)
			}
		}
		if len(narrowed) == 0 {
			return verifyKey{}, false
		}
		algs = narrowed
	}
	kid, _ := k.KeyID()
	return verifyKey{kid: kid, algs: algs, key: raw}, true
}
