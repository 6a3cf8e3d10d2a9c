//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// composeCommand returns the compose command of this machine: the docker
// CLI plugin (`docker compose`) or the standalone `docker-compose`.
func composeCommand(t *testing.T) []string {
	t.Helper()
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if exec.Command("docker-compose", "version").Run() == nil {
		return []string{"docker-compose"}
	}
	t.Fatal("neither `docker compose` nor `docker-compose` works on this machine")
	return nil
}

// TestCompose brings up deploy/compose/compose.yaml with the locally built
// images, publishes the fixture into its NATS and checks that lookupd
// answers both operations.
func TestCompose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	is := newIssuer(t)
	natsPort, httpPort, adminPort := freePort(t), freePort(t), freePort(t)
	project := "lookup-it-" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	base := append(composeCommand(t), "-p", project, "-f", "../deploy/compose/compose.yaml")
	env := append(os.Environ(),
		"LOOKUPD_IMAGE="+lookupdImage, "NATS_IMAGE="+natsImage, "NATSCLI_IMAGE="+natscliImage,
		"NATS_PORT="+natsPort, "LOOKUP_HTTP_PORT="+httpPort, "LOOKUP_ADMIN_PORT="+adminPort,
		"LOOKUP_JWKS_HOST_FILE="+writeFile(t, "jwks.json", is.jwks),
		"LOOKUP_ISSUER="+testIssuer, "LOOKUP_AUDIENCE="+testAudience,
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
	if out, err := compose("up", "-d"); err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}

	host := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE")
	if host == "" {
		host = "127.0.0.1"
	}
	js := connectJS(t, "nats://"+host+":"+natsPort)
	f := newFixture(t)
	last := publishAll(ctx, t, js, f.events)

	ld := &lookupd{api: "http://" + host + ":" + httpPort, admin: "http://" + host + ":" + adminPort}
	ld.waitReady(t)
	ld.waitApplied(t, last, 60*time.Second)
	checkAPI(t, ld.api, is, f)
}
