package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/lookup/persons/internal/logtest"
	"github.com/lookup/persons/internal/testcerts"
	"github.com/lookup/persons/internal/wait"
)

// TestServeAdminTLS: with LOOKUP_ADMIN_TLS=true the admin listener speaks
// HTTPS with the API's certificate and asks for no client certificate,
// even when the API requires one.
func TestServeAdminTLS(t *testing.T) {
	ns, _ := personsNATS(t)
	ca := testcerts.NewCA(t)
	cert := ca.Server(t, "api")
	environ := serveEnv(t, ns, t.TempDir())
	environ["LOOKUP_TLS_CERT_FILE"], environ["LOOKUP_TLS_KEY_FILE"] = cert.CertFile, cert.KeyFile
	environ["LOOKUP_TLS_CLIENT_CA_FILE"] = ca.CertFile
	environ["LOOKUP_ADMIN_TLS"] = "true"
	p := start(t, environ, "serve")
	admin := p.addrs(t)["admin"]

	b, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(b)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	wait.For(t, 30*time.Second, func() error {
		resp, err := client.Get("https://" + admin + "/readyz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz over HTTPS: %d, want 200", resp.StatusCode)
		}
		if got := resp.TLS.PeerCertificates[0].SerialNumber; got.Cmp(cert.Serial) != 0 {
			return fmt.Errorf("admin certificate serial %s, want the API's %s", got, cert.Serial)
		}
		return nil
	})
	if code, _, err := get("http://"+admin+"/readyz", ""); err == nil && code == http.StatusOK {
		t.Error("plain HTTP answered 200 on the admin HTTPS listener")
	}
}

func TestListenerTLSSettings(t *testing.T) {
	ca := testcerts.NewCA(t)
	cert := ca.Server(t, "api")
	tests := []struct {
		name      string
		sec       securityConfig
		wantErr   bool
		wantAPI   bool
		wantAdmin bool
	}{
		{"plain", securityConfig{}, false, false, false},
		{"API only", securityConfig{TLSCertFile: cert.CertFile, TLSKeyFile: cert.KeyFile}, false, true, false},
		{"API and admin", securityConfig{TLSCertFile: cert.CertFile, TLSKeyFile: cert.KeyFile, AdminTLS: true}, false, true, true},
		{"admin without certificate", securityConfig{AdminTLS: true}, true, false, false},
		{"client CA without certificate", securityConfig{TLSClientCAFile: ca.CertFile}, true, false, false},
		{"certificate without key", securityConfig{TLSCertFile: cert.CertFile}, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := logtest.Text()
			api, admin, err := listenerTLS(config{securityConfig: tt.sec}, logger)
			var ue *usageError
			if tt.wantErr {
				if !errors.As(err, &ue) {
					t.Fatalf("listenerTLS err = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("listenerTLS: %v", err)
			}
			if got := api != nil; got != tt.wantAPI {
				t.Errorf("API TLS = %v, want %v", got, tt.wantAPI)
			}
			if got := admin != nil; got != tt.wantAdmin {
				t.Errorf("admin TLS = %v, want %v", got, tt.wantAdmin)
			}
			if admin != nil && admin.ClientAuth != tls.NoClientCert {
				t.Errorf("admin ClientAuth = %v, want none", admin.ClientAuth)
			}
		})
	}
}
