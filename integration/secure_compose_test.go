//go:build integration

package integration

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestSecureCompose brings up the secure compose set-up
// (deploy/compose/compose.yaml with deploy/compose/secure.yaml, secrets by
// deploy/gen-secrets.sh): the stream jobs create the streams as the admin
// user over TLS, a publisher publishes over TLS, an anonymous client is
// refused, lookupd (NATS user lookupd over mTLS) projects and answers over
// HTTPS with the certificate of the CA, lookupd-audit (NATS user
// accounting) indexes the audit stream and answers a search over HTTPS,
// and neither the NATS store nor the read model holds an SSN or date of
// birth in plaintext.
func TestSecureCompose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := genSecrets(t)
	is := newIssuer(t)
	st := composeUp(ctx, t, "lookup-sec-", is, []string{"compose.yaml", "secure.yaml"}, "LOOKUP_SECRETS_DIR="+s.dir)
	compose, natsPort, httpPort, adminPort := st.run, st.natsPort, st.httpPort, st.adminPort
	host := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE")
	if host == "" {
		host = "127.0.0.1"
	}
	urls := []string{"tls://" + host + ":" + natsPort}

	_, _, adminJS := jetStreamAs(t, s, urls, "admin", nats.CustomInboxPrefix(adminInboxPrefix), nats.RetryOnFailedConnect(true))
	for _, name := range []string{"PERSONS", "PERSONS_DLQ", "PERSONS_AUDIT"} {
		eventually(t, 60*time.Second, "stream "+name+" created by its job", func() error {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err := adminJS.Stream(cctx, name)
			return err
		})
	}

	_, _, err := connectSecure(t, urls, s.tlsConfig(t, "publisher"), "", "", nats.MaxReconnects(0))
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("anonymous connect: got %v, want an authorization violation", err)
	}
	_, _, pubJS := jetStreamAs(t, s, urls, "publisher")
	f := newFixture(t)
	last := publishAll(ctx, t, pubJS, f.events)

	ld := &lookupd{api: "https://" + host + ":" + httpPort, admin: "http://" + host + ":" + adminPort}
	ld.waitReady(t)
	ld.waitApplied(t, last, 60*time.Second)
	checkHTTPS(t, s, ld.api+"/api/v1/persons/"+f.consumer, is.token(t, "read:persons", time.Hour))

	// lookupd-audit, as the NATS user accounting: its index follows the
	// audit stream (ready), and a search, recorded on its chain before it
	// is answered, answers over HTTPS.
	eventually(t, 60*time.Second, "lookupd-audit /readyz", func() error {
		return expectStatus("http://"+host+":"+st.auditAdminPort+"/readyz", http.StatusOK)
	})
	checkHTTPS(t, s, "https://"+host+":"+st.auditHTTPPort+"/fhir/AuditEvent?entity="+f.consumer, is.token(t, "read:audit", time.Hour))

	for _, c := range []struct{ service, dir string }{{"nats", "/data/jetstream"}, {"lookupd", "/data"}} {
		id, err := compose("ps", "-q", c.service)
		if err != nil {
			t.Fatalf("compose ps: %v\n%s", err, id)
		}
		all := copyFiles(t, strings.TrimSpace(id), c.dir)
		for _, secret := range secretsOfFixture {
			if strings.Contains(string(all), secret) {
				t.Errorf("%s: files of %s (%d bytes) hold %q in plaintext", c.service, c.dir, len(all), secret)
			}
		}
	}
}

// checkHTTPS gets url with token over HTTPS, trusting only the CA of s, and
// expects a 200 with the server certificate lookupd-https of gen-secrets.sh.
func checkHTTPS(t *testing.T, s *secrets, url, token string) {
	t.Helper()
	cfg := s.tlsConfig(t, "")
	cfg.ServerName = "localhost"
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: got %d, want 200: %s", url, resp.StatusCode, body)
	}
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "lookupd" {
		t.Errorf("server certificate CN: got %q, want %q", cn, "lookupd")
	}
}
