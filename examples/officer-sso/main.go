// Command officer-sso is a STAND-IN identity provider, for development
// and tests only, NEVER for production: it signs in whoever picks a name
// on its login page, without a password. It shows how the privacy
// officer's pages of lookupd audit serve are deployed behind an OIDC proxy
// (oauth2-proxy) that forwards the officer's ID token in Authorization
// (docs/audit.md, "Sign-in"; deploy/compose/officer.yaml).
//
// It is github.com/oauth2-proxy/mockoidc with our configuration: the
// client id and secret the proxy is registered with, an RSA key made
// afresh at every start (never mockoidc's built-in key, which is public),
// an issuer named after the address the browser reaches it at, and two
// users: "officer", in the group privacy-officers, whose ID token carries
// the scope read:audit in its scp claim, and "clerk", who has no such
// group and so no scope (users.go). That group-to-scope mapping is what a
// real identity provider is configured to do.
//
//	officer-sso --listen :9000 --public-addr localhost:9000 \
//	    --client-id lookup-officer --client-secret-file ./client-secret
//
// Its issuer is then http://localhost:9000/oidc, its key set
// http://localhost:9000/oidc/.well-known/jwks.json.
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/oauth2-proxy/mockoidc"
)

// config is the stand-in's configuration, from its flags.
type config struct {
	listen       string // address to listen on
	publicAddr   string // host:port the browser reaches it at ("" = the listener's)
	clientID     string // the OIDC client (the proxy): the ID tokens' aud
	clientSecret string // the client's secret, exactly the bytes of the file
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "officer-sso:", err)
		os.Exit(1)
	}
}

// run parses args, listens and serves until ctx is done.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	m, err := newProvider(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	return serve(ctx, m, ln, cfg.publicAddr, stderr)
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	var secretFile string
	fs := flag.NewFlagSet("officer-sso", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:9000", "address to listen on")
	fs.StringVar(&cfg.publicAddr, "public-addr", "", "host:port the browser reaches this provider at; the issuer is http://<it>/oidc (default: the listener's address)")
	fs.StringVar(&cfg.clientID, "client-id", "lookup-officer", "client id of the OIDC proxy (the ID tokens' audience)")
	fs.StringVar(&secretFile, "client-secret-file", "", "file holding the proxy's client secret, read as it is (required)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "officer-sso: a STAND-IN OIDC identity provider for development and tests, NEVER production: it signs anyone in without a password.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if secretFile == "" {
		return cfg, errors.New("--client-secret-file is required")
	}
	b, err := os.ReadFile(secretFile)
	if err != nil {
		return cfg, err
	}
	if len(b) < 16 {
		return cfg, fmt.Errorf("client secret file %s: want at least 16 bytes", secretFile)
	}
	cfg.clientSecret = string(b)
	return cfg, nil
}

// newProvider returns the mock provider of cfg, not started, with its
// login page in front of the authorization endpoint.
func newProvider(cfg config) (*mockoidc.MockOIDC, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	m, err := mockoidc.NewServer(key)
	if err != nil {
		return nil, err
	}
	m.ClientID, m.ClientSecret = cfg.clientID, cfg.clientSecret
	m.CodeChallengeMethodsSupported = []string{"S256"}
	if err := m.AddMiddleware(loginPage(m)); err != nil {
		return nil, err
	}
	return m, nil
}

// serve starts m on ln, its issuer named after publicAddr (the listener's
// address when empty), and stops it when ctx is done.
func serve(ctx context.Context, m *mockoidc.MockOIDC, ln net.Listener, publicAddr string, log io.Writer) error {
	if publicAddr != "" {
		ln = publicListener{Listener: ln, addr: publicAddr}
	}
	if err := m.Start(ln, nil); err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(log, "officer-sso: STAND-IN identity provider for development only, never production: issuer %s, client %s, users %s\n",
		m.Issuer(), m.ClientID, userList())
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Server.Shutdown(stopCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// publicListener is a listener whose Addr is the host:port the browser
// reaches it at: mockoidc names its issuer and endpoints after it.
type publicListener struct {
	net.Listener
	addr string
}

func (l publicListener) Addr() net.Addr { return publicAddr(l.addr) }

type publicAddr string

func (a publicAddr) Network() string { return "tcp" }
func (a publicAddr) String() string  { return string(a) }
