package certreload

import (
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"
)

// serveOn serves 200s on ln until the test ends and returns its address.
func serveOn(t *testing.T, ln net.Listener) string {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestListen: each listener speaks HTTPS when its certificate is set and
// plain HTTP otherwise; the admin one never asks for a client certificate.
func TestListen(t *testing.T) {
	ca := testkit.NewCA(t)
	p := ca.Server(t, "api")
	cp := ca.Client(t, "caller")
	client, err := tls.LoadX509KeyPair(cp.CertFile, cp.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name               string
		l                  Listeners
		wantAPI, wantAdmin bool // HTTPS
		apiNeedsClientCert bool
	}{
		{"plain", Listeners{}, false, false, false},
		{"API only", Listeners{CertFile: p.CertFile, KeyFile: p.KeyFile}, true, false, false},
		{"API and admin", Listeners{CertFile: p.CertFile, KeyFile: p.KeyFile, Admin: true}, true, true, false},
		{"mutual TLS API, admin without", Listeners{CertFile: p.CertFile, KeyFile: p.KeyFile, ClientCAFile: ca.CertFile, Admin: true}, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, admin, err := tt.l.Listen("127.0.0.1:0", "127.0.0.1:0")
			if err != nil {
				t.Fatalf("Listen: %v", err)
			}
			apiAddr, adminAddr := serveOn(t, api), serveOn(t, admin)
			roots := pool(t, ca)
			if _, err := servedSerial(apiAddr, roots, nil); (err == nil) != (tt.wantAPI && !tt.apiNeedsClientCert) {
				t.Errorf("API: TLS without a client certificate: err %v; want HTTPS %v, client certificate required %v", err, tt.wantAPI, tt.apiNeedsClientCert)
			}
			if tt.apiNeedsClientCert {
				if _, err := servedSerial(apiAddr, roots, &client); err != nil {
					t.Errorf("API: TLS with a client certificate: %v", err)
				}
			}
			if _, err := servedSerial(adminAddr, roots, nil); (err == nil) != tt.wantAdmin {
				t.Errorf("admin: TLS without a client certificate: err %v, want HTTPS %v", err, tt.wantAdmin)
			}
		})
	}
}

// TestListenErrors: a listener that cannot open is an error naming it,
// and the API listener opened before it is closed.
func TestListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if _, _, err := (Listeners{}).Listen(busy.Addr().String(), "127.0.0.1:0"); err == nil || !strings.HasPrefix(err.Error(), "API listener: ") {
		t.Errorf("API address in use: err %v, want one naming the API listener", err)
	}
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	apiAddr := free.Addr().String()
	free.Close()
	if _, _, err := (Listeners{}).Listen(apiAddr, busy.Addr().String()); err == nil || !strings.HasPrefix(err.Error(), "admin listener: ") {
		t.Errorf("admin address in use: err %v, want one naming the admin listener", err)
	}
	ln, err := net.Listen("tcp", apiAddr)
	if err != nil {
		t.Errorf("the API listener was not closed after the admin one failed: %v", err)
	} else {
		ln.Close()
	}
	if _, _, err := (Listeners{CertFile: "/no/such.pem", KeyFile: "/no/such.key"}).Listen("127.0.0.1:0", "127.0.0.1:0"); err == nil {
		t.Error("Listen with a missing certificate file succeeded")
	}
}
