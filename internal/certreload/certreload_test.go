package certreload

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"
)

// servedSerial connects to addr trusting ca and returns the serial number
// of the certificate the server presented.
func servedSerial(addr string, roots *x509.CertPool, client *tls.Certificate) (string, error) {
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if client != nil {
		cfg.Certificates = []tls.Certificate{*client}
	}
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.Handshake(); err != nil {
		return "", err
	}
	// Under TLS 1.3 a refused client certificate shows on the first read.
	if _, err := conn.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
		return "", err
	}
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		return "", err
	}
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

func pool(t *testing.T, ca *testkit.CA) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(b)
	return p
}

// serveTLS serves 200s over TLS with cfg and returns the address.
func serveTLS(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// newReloader returns a new CA, the pair "api" it issued, and a Reloader
// of that pair checking every interval (0: DefaultInterval).
func newReloader(t *testing.T, interval time.Duration) (*testkit.CA, testkit.Pair, *Reloader) {
	t.Helper()
	ca := testkit.NewCA(t)
	p := ca.Server(t, "api")
	r, err := New(p.CertFile, p.KeyFile, interval, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ca, p, r
}

func TestReloadOnChange(t *testing.T) {
	ca, first, r := newReloader(t, time.Millisecond)
	cfg, err := ServerConfig(r, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTLS(t, cfg)
	roots := pool(t, ca)
	if got, err := servedSerial(addr, roots, nil); err != nil || got != first.Serial.String() {
		t.Fatalf("first connection: serial %s, err %v; want %s", got, err, first.Serial)
	}
	// Rotation: new files in place. File times may be coarse: make sure
	// the new ones differ.
	second := ca.Server(t, "api")
	later := time.Now().Add(2 * time.Second)
	for _, f := range []string{second.CertFile, second.KeyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, 10*time.Second, func() error {
		got, err := servedSerial(addr, roots, nil)
		if err != nil {
			return err
		}
		if got != second.Serial.String() {
			return fmt.Errorf("serial %s, want the new %s", got, second.Serial)
		}
		return nil
	})
}

// TestBadRotationKeepsCertificate: the files are looked at once the
// interval has passed since the last look, not before; a certificate file
// that does not parse then keeps the previous certificate. On the bubble's
// clock, so that the interval is exact.
func TestBadRotationKeepsCertificate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Minute
		ca := testkit.NewCA(t)
		first := ca.Server(t, "api")
		var logs testkit.LogBuffer
		r, err := New(first.CertFile, first.KeyFile, interval, slog.New(slog.NewJSONHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.GetCertificate(nil); err != nil { // the first look
			t.Fatal(err)
		}
		// A half-done rotation: the certificate file is garbage.
		if err := os.WriteFile(first.CertFile, []byte("not a certificate"), 0o600); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(2 * time.Second)
		if err := os.Chtimes(first.CertFile, later, later); err != nil {
			t.Fatal(err)
		}
		const refused = "new TLS certificate not loaded; keeping the previous one"
		check := func(when string, looked bool) {
			t.Helper()
			c, err := r.GetCertificate(nil)
			if err != nil || c == nil {
				t.Fatalf("%s: GetCertificate = %v, %v; want the previous certificate", when, c, err)
			}
			leaf, err := x509.ParseCertificate(c.Certificate[0])
			if err != nil || leaf.SerialNumber.Cmp(first.Serial) != 0 {
				t.Errorf("%s: served serial %v (err %v), want the previous %s", when, leaf.SerialNumber, err, first.Serial)
			}
			if got := strings.Contains(logs.String(), refused); got != looked {
				t.Errorf("%s: files looked at = %v, want %v; log:\n%s", when, got, looked, logs.String())
			}
		}
		time.Sleep(interval - time.Nanosecond)
		check("just before the interval", false)
		time.Sleep(time.Nanosecond)
		check("at the interval", true)
	})
}

func TestClientCertificateRequired(t *testing.T) {
	ca, _, r := newReloader(t, 0)
	cfg, err := ServerConfig(r, ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTLS(t, cfg)
	roots := pool(t, ca)
	if _, err := servedSerial(addr, roots, nil); err == nil {
		t.Error("handshake without a client certificate succeeded, want refused")
	}
	cp := ca.Client(t, "caller")
	cert, err := tls.LoadX509KeyPair(cp.CertFile, cp.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := servedSerial(addr, roots, &cert); err != nil {
		t.Errorf("handshake with a client certificate: %v", err)
	}
}

func TestNewRefusesBadPair(t *testing.T) {
	ca := testkit.NewCA(t)
	a, b := ca.Server(t, "a"), ca.Server(t, "b")
	if _, err := New(a.CertFile, b.KeyFile, 0, nil); err == nil {
		t.Error("New with a key that does not match: nil error")
	}
	var pe *os.PathError
	if _, err := New(a.CertFile+".missing", a.KeyFile, 0, nil); !errors.As(err, &pe) {
		t.Errorf("New with a missing file: %v, want a path error", err)
	}
}
