package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/lookup/persons/internal/crash"
	"github.com/lookup/persons/internal/redact"
)

// The JWKS tuning defaults.
const (
	// defaultJWKSRefresh is how often a JWKS fetched from a URL is refreshed
	// in the background.
	defaultJWKSRefresh = 10 * time.Minute
	// defaultJWKSMinRefetch is the cool-down after a fetch triggered by a
	// token naming an unknown kid, counted from the end of that fetch.
	defaultJWKSMinRefetch = 30 * time.Second
	// jwksFetchTimeout bounds one fetch, whatever the HTTP client's timeout.
	jwksFetchTimeout = 10 * time.Second
	// maxJWKSBytes bounds the size of a JWKS document.
	maxJWKSBytes = 1 << 20
)

// JWKS is a set of public keys that verify access tokens. It is safe for
// concurrent use. A JWKS made by NewJWKSFromURL is refreshed in the
// background and refetched when a token names a key id it does not hold.
//
// Only asymmetric keys are kept: RSA keys of at least 2048 bits, EC keys on
// P-256 or P-384, and Ed25519 keys. Symmetric ("oct") keys, keys whose "use"
// is not "sig" and keys whose "key_ops" lack "verify" are ignored. Each key
// verifies only the algorithms its type allows (RSA: RS256, RS384, RS512,
// PS256; EC P-256: ES256; EC P-384: ES384; Ed25519: EdDSA), narrowed to the
// key's own "alg" when it has one. A key without a "kid" is a candidate for
// every token, whether or not the token names a kid.
//
// Why not jwx's own jwk.Cache (httprc): its on-demand Refresh runs one
// fetch per call (no single-flight, so a flood of unknown kids is a flood of
// fetches), it has no notion of a cool-down that only unknown-kid fetches
// count against, its errors carry the raw URL (query credentials included),
// and it holds a jwk.Set where verification wants the derived key set
// (usable keys, thumbprints, generation) rebuilt once per fetch. What it
// would save (an HTTP GET on a ticker) is the small part; see
// jwksrefresh.go for the part it cannot do.
type JWKS struct {
	set atomic.Pointer[keySet]

	// The rest is for URL sets only; fetch is nil for a static (file) set.
	fetch func(ctx context.Context) (*keySet, error)
	// life bounds every fetch: the refresh loop's and the unknown-kid
	// refetches' (never a request's context).
	life       context.Context
	minRefetch time.Duration
	now        func() time.Time
	unknownKid singleflight.Group

	mu sync.Mutex // never held across an HTTP call
	// lastKidFetchEnd is when the last unknown-kid fetch ended (zero: none
	// yet); start-up and background fetches do not set it.
	lastKidFetchEnd time.Time
	// installed is the start sequence of the fetch whose set is installed:
	// an older fetch finishing later never replaces a newer set.
	installed uint64
	gens      uint64 // generations handed out

	fetchSeq atomic.Uint64 // fetches started
	fetches  atomic.Int64  // fetches done (tests)
	failures atomic.Int64  // failed refreshes of a URL set (RefreshFailures)

	// log receives refresh failures (URL sets only); url is the set's URL
	// as logged: without credentials or query.
	log *slog.Logger
	url string

	// stopped is closed when the background refresh ends (URL sets only).
	stopped chan struct{}
}

// current returns the key set in use.
func (j *JWKS) current() *keySet { return j.set.Load() }

// install makes ks the key set in use, with a new generation, unless a
// fetch started after the one (seq) that produced ks already installed its
// set.
func (j *JWKS) install(seq uint64, ks *keySet) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if seq < j.installed {
		return
	}
	j.installed = seq
	j.gens++
	ks.gen = j.gens
	j.set.Store(ks)
}

// LoadJWKSFile reads a JWKS (a JSON Web Key Set, or a single JWK) from the
// file at path. It returns an error naming the file if the file is missing
// or unreadable, is not a valid JWKS, or holds no usable verification key
// (then the error wraps ErrNoUsableKeys).
func LoadJWKSFile(path string) (*JWKS, error) {
	f, err := os.Open(filepath.Clean(path))
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
	j, err := ParseJWKS(b)
	if err != nil {
		return nil, fmt.Errorf("jwks file %s: %w", path, err)
	}
	return j, nil
}

// ParseJWKS reads a JWKS (a JSON Web Key Set, or a single JWK) from b, as
// LoadJWKSFile reads a file's: the keys of an in-process issuer, such as
// lookuptest's. The error wraps ErrNoUsableKeys when b holds no usable
// verification key.
func ParseJWKS(b []byte) (*JWKS, error) {
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxJWKSBytes)
	}
	ks, err := parseKeySet(b)
	if err != nil {
		return nil, err
	}
	j := &JWKS{now: time.Now}
	j.install(0, ks)
	return j, nil
}

// NewJWKSFromURL fetches the JWKS at url with client (nil means a client
// with a 10 second timeout), keeps it cached and refreshes it in the
// background every 10 minutes until ctx is done. A token naming a key id
// that the set does not hold triggers a refetch (see jwksrefresh.go): one
// at a time, at most one every 30 seconds counted from the end of the last
// such refetch; start-up and background fetches do not count. A failed
// refresh keeps the keys already held and is logged at Warn to the logger
// of WithJWKSLogger (the URL without credentials or query; never key
// material).
//
// The URL must be https://, or plain http:// to a loopback host; other
// plain http:// URLs need WithJWKSAllowHTTP (else the error wraps
// ErrJWKSInsecureURL). Redirects are followed only within the URL's origin.
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

// ErrJWKSSource is returned by OpenJWKS when it is given no source, or
// both a file and a URL.
var ErrJWKSSource = errors.New("jwks: want one source, a file or a URL")

// OpenJWKS returns the keys of a service's one JWKS source: the file at
// path (LoadJWKSFile), or else the URL, fetched (by a client with a 10
// second timeout), cached and refreshed in the background until ctx is done with opts
// (NewJWKSFromURL). Its errors wrap those of the two, after "JWKS file: "
// or "JWKS URL: ", or are ErrJWKSSource.
func OpenJWKS(ctx context.Context, path, url string, opts ...JWKSOption) (*JWKS, error) {
	if (path == "") == (url == "") {
		return nil, ErrJWKSSource
	}
	if path != "" {
		k, err := LoadJWKSFile(path)
		if err != nil {
			return nil, fmt.Errorf("JWKS file: %w", err)
		}
		return k, nil
	}
	k, err := NewJWKSFromURL(ctx, url, nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("JWKS URL: %w", err)
	}
	return k, nil
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

// WithJWKSAllowHTTP, when allow is true, accepts a plain http:// JWKS URL
// to any host (by default only to a loopback host).
func WithJWKSAllowHTTP(allow bool) JWKSOption {
	return func(t *jwksTuning) { t.allowHTTP = allow }
}

// jwksTuning overrides the URL JWKS timings (zero values mean defaults).
type jwksTuning struct {
	refresh    time.Duration
	minRefetch time.Duration
	now        func() time.Time
	log        *slog.Logger
	allowHTTP  bool
}

func newJWKSFromURL(ctx context.Context, rawURL string, client *http.Client, t jwksTuning) (*JWKS, error) {
	shown := redact.URL(rawURL)
	origin, err := checkJWKSURL(rawURL, shown, t.allowHTTP)
	if err != nil {
		return nil, err
	}
	client = sameOriginClient(client, origin)
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
	j := &JWKS{
		fetch:      func(ctx context.Context) (*keySet, error) { return fetchKeySet(ctx, client, rawURL, shown) },
		life:       ctx,
		minRefetch: t.minRefetch,
		now:        t.now,
		stopped:    make(chan struct{}),
		log:        t.log,
		url:        shown,
	}
	if err := j.refresh(ctx); err != nil {
		return nil, err
	}
	go func() { defer crash.Guard(); j.refreshLoop(ctx, t.refresh) }()
	return j, nil
}
