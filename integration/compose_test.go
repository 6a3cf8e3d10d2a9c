//go:build integration

package integration

import (
	"context"
	"net/http"
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

// composeStack is a compose project brought up by composeUp.
type composeStack struct {
	run                           func(args ...string) (string, error) // docker compose <args> on the project
	natsPort, httpPort, adminPort string                               // host ports
	auditHTTPPort, auditAdminPort string                               // of lookupd-audit
}

// composeUp brings up a compose project of files (relative to
// deploy/compose) with the locally built images, free host ports, the
// issuer's JWKS and extra environment, and takes it down (logs first, if
// the test failed) when the test ends.
func composeUp(ctx context.Context, t *testing.T, prefix string, is *issuer, files []string, extraEnv ...string) composeStack {
	t.Helper()
	st := composeStack{natsPort: freePort(t), httpPort: freePort(t), adminPort: freePort(t),
		auditHTTPPort: freePort(t), auditAdminPort: freePort(t)}
	project := prefix + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	base := append(composeCommand(t), "-p", project)
	for _, f := range files {
		base = append(base, "-f", "../deploy/compose/"+f)
	}
	env := append(os.Environ(),
		"LOOKUPD_IMAGE="+lookupdImage, "NATS_IMAGE="+natsImage, "NATSCLI_IMAGE="+natscliImage,
		"NATS_PORT="+st.natsPort, "LOOKUP_HTTP_PORT="+st.httpPort, "LOOKUP_ADMIN_PORT="+st.adminPort,
		"LOOKUP_AUDIT_HTTP_PORT="+st.auditHTTPPort, "LOOKUP_AUDIT_ADMIN_PORT="+st.auditAdminPort,
		"LOOKUP_JWKS_HOST_FILE="+writeFile(t, "jwks.json", is.jwks),
		"LOOKUP_ISSUER="+testIssuer, "LOOKUP_AUDIENCE="+testAudience,
	)
	env = append(env, extraEnv...)
	st.run = func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, base[0], append(base[1:], args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := st.run("logs", "--no-color", "--tail", "50")
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := st.run("down", "-v", "--remove-orphans"); err != nil {
			t.Logf("compose down: %v\n%s", err, out)
		}
	})
	if out, err := st.run("up", "-d"); err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}
	return st
}

// TestCompose brings up deploy/compose/compose.yaml with the locally built
// images, publishes the fixture into its NATS and checks that lookupd
// answers both operations, and lookupd-audit a search.
func TestCompose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	is := newIssuer(t)
	st := composeUp(ctx, t, "lookup-it-", is, []string{"compose.yaml"})
	natsPort, httpPort, adminPort := st.natsPort, st.httpPort, st.adminPort

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

	// lookupd-audit beside it: its index follows the audit stream
	// (ready), and a search is answered.
	eventually(t, 60*time.Second, "lookupd-audit /readyz", func() error {
		return expectStatus("http://"+host+":"+st.auditAdminPort+"/readyz", http.StatusOK)
	})
	getOK(t, "http://"+host+":"+st.auditHTTPPort, "/fhir/AuditEvent?entity="+f.consumer, is.token(t, "read:audit", time.Hour))
}
