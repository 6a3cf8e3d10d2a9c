//go:build integration

package integration

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestSecureCompose brings up the secure compose set-up
// (deploy/compose/compose.yaml with deploy/compose/secure.yaml, secrets by
// deploy/gen-secrets.sh): the stream jobs create the streams as the admin
// user over TLS, a publisher publishes over TLS, an anonymous client is
// refused, and the NATS store holds no SSN or date of birth in plaintext.
func TestSecureCompose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := genSecrets(t)
	natsPort := freePort(t)
	project := "lookup-sec-" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	base := append(composeCommand(t), "-p", project,
		"-f", "../deploy/compose/compose.yaml", "-f", "../deploy/compose/secure.yaml")
	env := append(os.Environ(),
		"LOOKUPD_IMAGE="+lookupdImage, "NATS_IMAGE="+natsImage, "NATSCLI_IMAGE="+natscliImage,
		"NATS_PORT="+natsPort, "LOOKUP_SECRETS_DIR="+s.dir,
		"LOOKUP_HTTP_PORT="+freePort(t), "LOOKUP_ADMIN_PORT="+freePort(t),
		"LOOKUP_JWKS_HOST_FILE="+writeFile(t, "jwks.json", newIssuer(t).jwks),
	)
	compose := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, base[0], append(base[1:], args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := compose("logs", "--no-color", "--tail", "50")
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := compose("down", "-v", "--remove-orphans"); err != nil {
			t.Logf("compose down: %v\n%s", err, out)
		}
	})
	// lookupd joins once it can authenticate to NATS (LOOKUP_NATS_*).
	if out, err := compose("up", "-d", "stream-persons", "stream-dlq", "stream-audit"); err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}
	host := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE")
	if host == "" {
		host = "127.0.0.1"
	}
	urls := []string{"tls://" + host + ":" + natsPort}

	admin, _, err := connectSecure(t, urls, s.tlsConfig(t, "admin"), "admin", s.password(t, "admin"),
		nats.CustomInboxPrefix(adminInboxPrefix), nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatalf("admin connect: %v", err)
	}
	adminJS, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"PERSONS", "PERSONS_DLQ", "PERSONS_AUDIT"} {
		eventually(t, 60*time.Second, "stream "+name+" created by its job", func() error {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err := adminJS.Stream(cctx, name)
			return err
		})
	}

	_, _, err = connectSecure(t, urls, s.tlsConfig(t, "publisher"), "", "", nats.MaxReconnects(0))
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("anonymous connect: got %v, want an authorization violation", err)
	}
	pub, _, err := connectSecure(t, urls, s.tlsConfig(t, "publisher"), "publisher", s.password(t, "publisher"))
	if err != nil {
		t.Fatalf("publisher connect: %v", err)
	}
	pubJS, err := jetstream.New(pub)
	if err != nil {
		t.Fatal(err)
	}
	publishAll(ctx, t, pubJS, newFixture(t).events)

	id, err := compose("ps", "-q", "nats")
	if err != nil {
		t.Fatalf("compose ps: %v\n%s", err, id)
	}
	all := copyStore(t, strings.TrimSpace(id))
	for _, secret := range secretsOfFixture {
		if strings.Contains(string(all), secret) {
			t.Errorf("compose NATS store files (%d bytes) hold %q in plaintext", len(all), secret)
		}
	}
}
