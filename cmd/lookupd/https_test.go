package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestServeHTTPSRotation: with LOOKUP_TLS_CERT_FILE and _KEY_FILE the API
// answers over HTTPS (TLS 1.2 and up, plain HTTP refused), with
// X-Content-Type-Options: nosniff; a certificate replaced on disk is the
// one the next connection gets, without a restart.
func TestServeHTTPSRotation(t *testing.T) {
	ns, js := personsNATS(t)
	id := dev.DemoID("t-consumer", 0)
	publish(t, js, events.Consumer{ConsumerID: id, BusinessID: dev.DemoID("business", 0), FirstName: "A", LastName: "B"})
	ca := testkit.NewCA(t)
	first := ca.Server(t, "api")
	environ := serveEnv(t, ns, t.TempDir())
	environ["LOOKUP_TLS_CERT_FILE"], environ["LOOKUP_TLS_KEY_FILE"] = first.CertFile, first.KeyFile
	p := start(t, environ, "serve")
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])

	b, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(b)
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})
	url := "https://" + addrs["api"] + "/api/v1/persons/" + id
	// getOver answers one GET on a new connection and the serial number of
	// the certificate the server presented.
	getOver := func(maxVersion uint16) (int, string, error) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS10, MaxVersion: maxVersion}, DisableKeepAlives: true} //nolint:gosec // probing that old versions are refused
		defer tr.CloseIdleConnections()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			return 0, "", errors.New("no X-Content-Type-Options: nosniff")
		}
		return resp.StatusCode, resp.TLS.PeerCertificates[0].SerialNumber.String(), nil
	}
	if code, serial, err := getOver(0); err != nil || code != http.StatusOK || serial != first.Serial.String() {
		t.Fatalf("GET over HTTPS: %d, serial %s, %v; want 200 with the first certificate %s", code, serial, err, first.Serial)
	}
	if _, _, err := getOver(tls.VersionTLS11); err == nil {
		t.Error("TLS 1.1 accepted, want refused")
	}
	if code, _, err := get("http://"+addrs["api"]+"/api/v1/persons/"+id, tok); err == nil && code == http.StatusOK {
		t.Error("plain HTTP answered 200 on the HTTPS listener")
	}

	second := ca.Server(t, "api") // rotation: the same files, a new certificate
	later := time.Now().Add(2 * time.Second)
	for _, f := range []string{second.CertFile, second.KeyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, 15*time.Second, func() error {
		code, serial, err := getOver(0)
		if err != nil {
			return err
		}
		if code != http.StatusOK || serial != second.Serial.String() {
			return fmt.Errorf("%d with serial %s, want 200 with the new certificate %s", code, serial, second.Serial)
		}
		return nil
	})
	if strings.Contains(p.stderr.String(), tok) {
		t.Error("the token reached the log")
	}
}

// TestServeAdminTLS: with LOOKUP_ADMIN_TLS=true the admin listener speaks
// HTTPS with the API's certificate and asks for no client certificate,
// even when the API requires one.
func TestServeAdminTLS(t *testing.T) {
	ns, _ := personsNATS(t)
	ca := testkit.NewCA(t)
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
	testkit.WaitFor(t, 30*time.Second, func() error {
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
