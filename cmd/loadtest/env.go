package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// runEnv is what one run makes for itself in its temporary directory: the
// key that signs its tokens (and the JWKS lookupd verifies them with), the
// certificate of the HTTPS servers, and the token that builds the model.
// None of it is kept in the model directory.
type runEnv struct {
	bin        string
	dir        string
	keyPath    string
	jwksPath   string
	cert       *loadtest.Cert
	buildToken string
	serveExtra []string // more flags of every lookupd serve (--profile's --pprof)
}

// newRunEnv makes the key, its JWKS, the certificate and the build token
// in dir.
func newRunEnv(ctx context.Context, bin, dir string) (*runEnv, error) {
	env := &runEnv{bin: bin, dir: dir}
	var err error
	if env.keyPath, env.jwksPath, err = loadtest.CreateKeyIn(ctx, bin, dir); err != nil {
		return nil, err
	}
	if env.cert, err = loadtest.NewCert(dir); err != nil {
		return nil, err
	}
	toks, err := loadtest.MintTokens(ctx, bin, env.keyPath, loadtest.Scopes, 6*time.Hour, 1)
	if err != nil {
		return nil, err
	}
	env.buildToken = toks[0]
	return env, nil
}

// serveConf is one configuration lookupd serve is measured in.
type serveConf struct {
	name  string // as the report says it
	audit string // LOOKUP_AUDIT; "" for its default (required)
	tls   bool   // HTTPS, with the run's certificate
}

// serveConfs are the configurations measured, the default first.
var serveConfs = []serveConf{
	{name: "default (ledger required), HTTP"},
	{name: "LOOKUP_AUDIT=off, HTTP", audit: "off"},
	{name: "default (ledger required), HTTPS", tls: true},
	{name: "LOOKUP_AUDIT=off, HTTPS", audit: "off", tls: true},
}

// startServe starts lookupd serve in configuration conf on the model's
// read model and broker, and waits until it has applied the model's
// events.
func (env *runEnv) startServe(ctx context.Context, m *model, conf serveConf, progress io.Writer) (*loadtest.Dev, error) {
	c := loadtest.ServeConfig{Bin: env.bin, DataDir: filepath.Join(m.dir, loadtest.ModelLookupdDir),
		NATS: m.broker.URL, Stream: loadtest.Stream, JWKSFile: env.jwksPath, Issuer: loadtest.Issuer, Audience: loadtest.Audience}
	c.Extra = append([]string(nil), env.serveExtra...)
	if conf.audit != "" {
		c.Extra = append(c.Extra, "--audit", conf.audit)
	}
	if conf.tls {
		c.TLSCertFile, c.TLSKeyFile = env.cert.CertFile, env.cert.KeyFile
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	srv, err := loadtest.StartServe(sctx, c)
	cancel()
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	if _, err := loadtest.WaitCaughtUp(ctx, hc, srv.Admin, m.manifest.LastSeq, progress); err != nil {
		_ = srv.Stop()
		return nil, fmt.Errorf("%w; its log ends:\n%s", err, srv.Logs())
	}
	return srv, nil
}

// client returns an HTTP client for the API, trusting the run's
// certificate when tls.
func (env *runEnv) client(tls bool) *http.Client {
	c := &http.Client{Timeout: 10 * time.Second}
	if tls {
		c.Transport = &http.Transport{TLSClientConfig: env.cert.ClientTLS(), MaxIdleConnsPerHost: fetchWorkers}
	} else {
		c.Transport = &http.Transport{MaxIdleConnsPerHost: fetchWorkers}
	}
	return c
}
