//go:build integration

// Package integration is the black-box suite of lookupd on real
// infrastructure: the container images of deploy/ run with testcontainers-go
// (Ryuk disabled, nothing pulled), events go in through events.Publisher,
// answers come out of the HTTP API with real tokens.
//
// Run it with `make integration` (which builds the images first) or, once the
// images exist, `go test -tags integration ./integration/`. The tests:
//
//   - TestImages: non-root numeric user, no shell, CA certificates.
//   - TestEndToEnd: every event type through events.Publisher; both
//     operations with and without expand; 400, 401, 403, 404; no secret in
//     the logs; a new container on the same volume resumes from its
//     checkpoint and applies nothing twice (counters on /metrics); an
//     invalid event is dead-lettered; tenancy.
//   - TestNATSRestart: NATS stopped and started while events are published.
//   - TestNATSCluster: three nodes, streams replicated three times; the node
//     lookupd is connected to, then the stream leader, stopped while events
//     flow.
//   - TestCompose: deploy/compose/compose.yaml comes up and answers, and
//     its accounting service lookupd-audit too.
//   - TestRollingUpdate: three replicas behind a balancer that follows
//     /readyz, replaced one by one under load: 0 failed requests with
//     LOOKUP_SHUTDOWN_DELAY (the run without it is the baseline).
//   - TestAuditLedger: 1,000 protected reads from four callers give one
//     audit record per read and disclosed person (none for the others);
//     lookupd audit --person (jsonl, fhir) and audit verify (a deleted and
//     an altered record); no SSN or birth date in the stream's files; 503
//     for protected reads without the audit stream, 200 for plain ones.
//   - TestAuditNATSKilled: NATS SIGKILLed under audited load and started
//     again: the answers while it is down are 503; every answer sent (200)
//     has its records, once; audit verify passes on the whole stream.
//   - TestAccountingService: lookupd audit serve in its container beside
//     lookupd: its search (FHIR, JSON lines) returns exactly the
//     disclosures answered; SIGKILLed mid-load and started again on its
//     volume, it catches up, its index equal to a full scan of the stream.
//   - TestSecureNATS: deploy/k8s/nats/nats.conf and deploy/nats/auth.conf on
//     three nodes with secrets of deploy/gen-secrets.sh: invalid connections
//     refused; the publisher publishes persons.> only and reads nothing; the
//     lookupd user's permissions; lookupd over mTLS projects and serves; no
//     SSN or birth date in the store or read model files.
//   - TestSnapshotBootstrap: a million events; replica B bootstraps from
//     replica A's snapshot in at most a fifth of A's replay, answers as A
//     for 1,000 random ids, then rebuilds under 2,000 requests/s with no
//     failed or differing answer and the old model deleted.
//   - TestTwoRegions: deploy's two-region NATS (origin server, leaf node
//     holding a mirror) on the secure set-up, a replica in each region:
//     read-your-writes across regions, the link cut and restored, a region
//     B replica bootstrapped from region B's bucket, throughput of region
//     B against region A, refusals of another origin's mirror.
//   - TestSecureCompose: compose.yaml with secure.yaml: the stream jobs as
//     admin over TLS, lookupd over mTLS answering HTTPS, lookupd-audit as
//     the NATS user accounting answering HTTPS, no SSN or birth date in the
//     NATS store or the read model.
//
// Independent tests run in parallel, each on its own docker network.
// Environment: LOOKUPD_IMAGE, NATS_IMAGE, NATSCLI_IMAGE (as in the Makefile);
// TESTCONTAINERS_HOST_OVERRIDE when published ports are not on the docker
// host testcontainers guesses.
package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
)

// Images, named as in the Makefile (LOOKUPD_IMAGE, NATS_IMAGE, NATSCLI_IMAGE).
var (
	lookupdImage string
	natsImage    string
	natscliImage string
)

// Token claims the suite configures lookupd with.
const (
	testIssuer   = "https://issuer.integration.test"
	testAudience = "lookup-api"
)

func TestMain(m *testing.M) {
	// Ryuk is a container image too and cannot be pulled here; every test
	// removes what it starts through t.Cleanup instead.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	// testcontainers guesses the address of published ports; inside a
	// container (a /.dockerenv) it takes the default gateway, which is wrong
	// when the Docker daemon runs in this same container (a docker0 bridge
	// here): then published ports are on the loopback.
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" && os.Getenv("DOCKER_HOST") == "" {
		if _, err := net.InterfaceByName("docker0"); err == nil {
			os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
		}
	}
	lookupdImage = envOr("LOOKUPD_IMAGE", "lookup/lookupd:dev")
	natsImage = envOr("NATS_IMAGE", "lookup/nats-server:"+moduleVersion("..", "github.com/nats-io/nats-server/v2"))
	natscliImage = envOr("NATSCLI_IMAGE", "lookup/natscli:"+moduleVersion("../deploy/natscli", "github.com/nats-io/natscli"))
	for _, img := range []string{lookupdImage, natsImage, natscliImage} {
		if err := exec.Command("docker", "image", "inspect", img).Run(); err != nil {
			fmt.Fprintf(os.Stderr, "image %s is missing: run `make images` first (nothing may be pulled)\n", img)
			os.Exit(1)
		}
	}
	// testcontainers pulls only when AlwaysPullImage is set (never here) or
	// when the image is not found locally (checked above); the image list
	// is compared after the run to prove that nothing was pulled.
	before := imageIDs()
	start := time.Now()
	code := m.Run()
	fmt.Printf("integration suite ran in %s\n", time.Since(start).Round(time.Second))
	if after := imageIDs(); after != before {
		fmt.Fprintf(os.Stderr, "docker images changed during the suite (a pull?):\nbefore:\n%s\nafter:\n%s\n", before, after)
		code = 1
	}
	os.Exit(code)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// moduleVersion returns the version of module mod required by the module in dir.
func moduleVersion(dir, mod string) string {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", mod)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go list -m %s: %v\n", mod, err)
		os.Exit(1)
	}
	return strings.TrimSpace(string(out))
}

// imageIDs lists the ids of all local images, sorted, one per line.
func imageIDs() string {
	out, err := exec.Command("docker", "images", "-q", "--no-trunc").Output()
	if err != nil {
		return "error: " + err.Error()
	}
	ids := strings.Fields(string(out))
	sort.Strings(ids)
	return strings.Join(ids, "\n")
}

// eventually polls cond (internal/testing/testkit) until it returns nil or timeout
// passes, then fails the test with cond's last error.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	if err := testkit.WaitUntil(timeout, cond); err != nil {
		t.Fatalf("%s: not reached within %v: %v", what, timeout, err)
	}
}

// newNetwork creates a docker network removed at the end of the test.
func newNetwork(ctx context.Context, t *testing.T) string {
	t.Helper()
	nw, err := tcnetwork.New(ctx)
	if err != nil {
		t.Fatalf("create network: %v", err)
	}
	testcontainers.CleanupNetwork(t, nw)
	return nw.Name
}

// freePort returns a TCP port free on the host now, chosen below the
// kernel's ephemeral range (32768 and up), where Docker also allocates the
// ports it maps at random: a fixed binding must not race with those.
func freePort(t *testing.T) string {
	t.Helper()
	for range 100 {
		p := 20000 + mathrand.IntN(12000)
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l.Close()
		return strconv.Itoa(p)
	}
	t.Fatal("no free port found in 20000-32000")
	return ""
}

// natsNode is one nats-server container.
type natsNode struct {
	name string // network alias
	ctr  testcontainers.Container
	url  string // nats://<docker host>:<host port>, stable across stop/start
}

// startNATS starts a nats-server container on network nw with the given
// alias. Its client port is bound to a fixed host port so that clients on
// the host reconnect to the same URL after the container is restarted.
// Extra files (e.g. a config) and environment are optional.
func startNATS(ctx context.Context, t *testing.T, nw, alias string, cmd []string, env map[string]string, files []testcontainers.ContainerFile) *natsNode {
	t.Helper()
	hostPort := freePort(t)
	req := testcontainers.ContainerRequest{
		Image:          natsImage,
		Cmd:            cmd,
		Env:            env,
		Files:          files,
		ExposedPorts:   []string{"4222/tcp", "8222/tcp"},
		Networks:       []string{nw},
		NetworkAliases: map[string][]string{nw: {alias}},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.PortBindings = mobynet.PortMap{
				mobynet.MustParsePort("4222/tcp"): {{HostPort: hostPort}},
			}
		},
		WaitingFor: wait.ForLog("Server is ready").WithStartupTimeout(60 * time.Second),
	}
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		t.Fatalf("start nats %s: %v", alias, err)
	}
	host, err := c.Host(ctx)
	if err != nil {
		t.Fatalf("nats %s host: %v", alias, err)
	}
	return &natsNode{name: alias, ctr: c, url: "nats://" + net.JoinHostPort(host, hostPort)}
}

// connectionNames lists the names of the client connections the node
// holds, from its monitoring endpoint /connz.
func (n *natsNode) connectionNames(ctx context.Context) ([]string, error) {
	mon, err := n.ctr.PortEndpoint(ctx, "8222/tcp", "http")
	if err != nil {
		return nil, err
	}
	resp, err := http.Get(mon + "/connz")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var connz struct {
		Connections []struct {
			Name string `json:"name"`
		} `json:"connections"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&connz); err != nil {
		return nil, fmt.Errorf("connz of %s: %w", n.name, err)
	}
	var names []string
	for _, c := range connz.Connections {
		names = append(names, c.Name)
	}
	return names, nil
}

// stop stops the node's container (SIGTERM, then SIGKILL after 10s).
func (n *natsNode) stop(ctx context.Context, t *testing.T) {
	t.Helper()
	timeout := 10 * time.Second
	if err := n.ctr.Stop(ctx, &timeout); err != nil {
		t.Fatalf("stop nats %s: %v", n.name, err)
	}
}

// start starts the stopped container again, on the same host port and store.
func (n *natsNode) start(ctx context.Context, t *testing.T) {
	t.Helper()
	if err := n.ctr.Start(ctx); err != nil {
		t.Fatalf("start nats %s: %v", n.name, err)
	}
}

// singleNATS starts one NATS node, reachable as "nats" on a new network,
// with the single-replica PERSONS and PERSONS_DLQ streams of deploy/streams,
// and returns the network, the node and a JetStream client of it.
func singleNATS(ctx context.Context, t *testing.T) (string, *natsNode, jetstream.JetStream) {
	t.Helper()
	nw := newNetwork(ctx, t)
	nn := startNATS(ctx, t, nw, "nats", nil, nil, nil)
	js := connectJS(t, nn.url)
	createStreams(ctx, t, js, "persons.json", "persons_dlq.json")
	return nw, nn, js
}

// connectJS connects to the given servers, reconnecting forever, and returns
// a JetStream context. The connection is closed at the end of the test.
func connectJS(t *testing.T, urls ...string) jetstream.JetStream {
	t.Helper()
	_, js := testkit.ConnectNATS(t, strings.Join(urls, ","),
		nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond),
		nats.RetryOnFailedConnect(true), nats.Timeout(5*time.Second))
	return js
}

// createStreams creates the streams of deploy/streams/<file> (as the
// compose job and the Kubernetes Job do with `nats stream add --config`),
// retrying while JetStream is not yet available (a cluster electing its
// meta leader).
func createStreams(ctx context.Context, t *testing.T, js jetstream.JetStream, files ...string) {
	t.Helper()
	for _, f := range files {
		cfg := loadStreamConfig(t, f)
		eventually(t, 60*time.Second, "create stream from "+f, func() error {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := js.CreateStream(cctx, cfg)
			return err
		})
	}
}

// publishAll publishes evs in order through events.Publisher, retrying each
// one until it is acknowledged (the broker may be away); a retried event
// keeps its id, so Nats-Msg-Id dedup stores it once. It returns the last
// stream sequence.
func publishAll(ctx context.Context, t *testing.T, js jetstream.JetStream, evs []events.Event) uint64 {
	t.Helper()
	seq, err := publishRetrying(ctx, events.NewPublisher(js), evs, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// publishRetrying publishes evs in order, each retried until acknowledged
// or ctx ends, waiting pace between events; acked, when not nil, is called
// after each acknowledgement with the count so far.
func publishRetrying(ctx context.Context, pub *events.Publisher, evs []events.Event, pace time.Duration, acked func(n int)) (uint64, error) {
	var last uint64
	for i, ev := range evs {
		for {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			seq, err := pub.Publish(pctx, ev)
			cancel()
			if err == nil {
				last = seq
				break
			}
			if ctx.Err() != nil {
				return last, fmt.Errorf("publish event %d of %d (%s): %w (last error %w)", i+1, len(evs), ev.Type, ctx.Err(), err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if acked != nil {
			acked(i + 1)
		}
		if pace > 0 {
			time.Sleep(pace)
		}
	}
	return last, nil
}

// lookupd is one lookupd container.
type lookupd struct {
	owner *testing.T // the test that started it: its containers live as long as it
	cfg   lookupdConfig
	ctr   testcontainers.Container
	api   string // http://host:port of the API
	admin string // http://host:port of the admin listener
}

// lookupdConfig is what a lookupd container is started with.
type lookupdConfig struct {
	network string
	natsURL string // as seen from the container network
	volume  string // named docker volume for /data, removed at the end of the test
	jwks    []byte
	env     map[string]string              // extra environment
	files   []testcontainers.ContainerFile // extra files
	args    []string                       // the command; none: serve
}

// startLookupd starts `lookupd serve` and waits until /livez answers.
func startLookupd(ctx context.Context, t *testing.T, cfg lookupdConfig) *lookupd {
	t.Helper()
	// Registered first, so it runs after the containers are gone.
	t.Cleanup(func() { _ = exec.Command("docker", "volume", "rm", "-f", cfg.volume).Run() })
	l := &lookupd{owner: t, cfg: cfg}
	l.run(ctx, t)
	return l
}

// run creates and starts a new container on l.cfg.
func (l *lookupd) run(ctx context.Context, t *testing.T) {
	t.Helper()
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: l.cfg.request(), Started: true})
	// Cleanups go to the owner: a container started by a subtest (replace)
	// must outlive that subtest.
	testcontainers.CleanupContainer(l.owner, c)
	if err != nil {
		dumpLogs(ctx, t, c)
		t.Fatalf("start lookupd: %v", err)
	}
	l.ctr = c
	l.owner.Cleanup(func() {
		if l.owner.Failed() {
			dumpLogs(context.Background(), l.owner, c)
		}
	})
	l.endpoints(ctx, t)
	eventually(t, 60*time.Second, "lookupd /livez", func() error {
		return expectStatus(l.admin+"/livez", http.StatusOK)
	})
}

// request is the container request of `lookupd serve` on cfg.
func (cfg lookupdConfig) request() testcontainers.ContainerRequest {
	req := testcontainers.ContainerRequest{
		Image: lookupdImage,
		Cmd:   []string{"serve"},
		Env: map[string]string{
			"LOOKUP_NATS_URL":  cfg.natsURL,
			"LOOKUP_JWKS_FILE": "/etc/lookupd-jwks.json",
			"LOOKUP_ISSUER":    testIssuer,
			"LOOKUP_AUDIENCE":  testAudience,
		},
		Files: append([]testcontainers.ContainerFile{{
			Reader: bytes.NewReader(cfg.jwks), ContainerFilePath: "/etc/lookupd-jwks.json", FileMode: 0o644,
		}}, cfg.files...),
		Mounts:       testcontainers.ContainerMounts{testcontainers.VolumeMount(cfg.volume, "/data")},
		ExposedPorts: []string{"8080/tcp", "9090/tcp"},
		Networks:     []string{cfg.network},
		// No wait strategy: the port checks of testcontainers exec a shell
		// in the container, and the image has none. /livez is polled below.
	}
	for k, v := range cfg.env {
		req.Env[k] = v
	}
	if len(cfg.args) > 0 {
		req.Cmd = cfg.args
	}
	return req
}

// endpoints reads the host ports of the API and the admin listener, which
// change when the container is restarted.
func (l *lookupd) endpoints(ctx context.Context, t *testing.T) {
	t.Helper()
	var err error
	if l.api, err = l.ctr.PortEndpoint(ctx, "8080/tcp", "http"); err != nil {
		t.Fatalf("api endpoint: %v", err)
	}
	if l.admin, err = l.ctr.PortEndpoint(ctx, "9090/tcp", "http"); err != nil {
		t.Fatalf("admin endpoint: %v", err)
	}
}

// replace stops and removes the lookupd container gracefully and starts a
// new one on the same volume: only the volume carries the read model over.
func (l *lookupd) replace(ctx context.Context, t *testing.T) {
	t.Helper()
	if err := l.ctr.Terminate(ctx, testcontainers.StopTimeout(20*time.Second)); err != nil {
		t.Fatalf("terminate lookupd: %v", err)
	}
	l.run(ctx, t)
}

// logs returns everything the container wrote so far.
func (l *lookupd) logs(ctx context.Context, t *testing.T) string {
	t.Helper()
	rc, err := l.ctr.Logs(ctx)
	if err != nil {
		t.Fatalf("logs: %v", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("logs: %v", err)
	}
	return string(b)
}

// logsThrough returns the container's logs once every line written before
// the call is in them: lookupd writes its log through a buffer (flushed
// within 200 ms), so it sends a request with a request id of its own and
// polls until that request's access-log line is there; the lines before it
// were written out with it.
func (l *lookupd) logsThrough(ctx context.Context, t *testing.T) string {
	t.Helper()
	barrier := "logs-barrier-" + uuid.NewString()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.api+"/api/v1/persons/"+uuid.NewString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Request-Id", barrier)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("barrier request: %v", err)
	}
	_ = resp.Body.Close()
	var logs string
	eventually(t, 10*time.Second, "the barrier request's access-log line", func() error {
		if logs = l.logs(ctx, t); !strings.Contains(logs, barrier) {
			return errors.New("not in the logs yet")
		}
		return nil
	})
	return logs
}

// waitReady polls /readyz until it answers 200.
func (l *lookupd) waitReady(t *testing.T) {
	t.Helper()
	eventually(t, 90*time.Second, "lookupd /readyz", func() error {
		return expectStatus(l.admin+"/readyz", http.StatusOK)
	})
}

// metric returns the value of an unlabelled metric on /metrics.
func (l *lookupd) metric(t *testing.T, name string) float64 {
	t.Helper()
	v, err := scrape(l.admin+"/metrics", name)
	if err != nil {
		t.Fatalf("metric %s: %v", name, err)
	}
	return v
}

// waitApplied polls until lookup_projector_applied_sequence reaches seq.
func (l *lookupd) waitApplied(t *testing.T, seq uint64, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("applied sequence %d", seq), func() error {
		v, err := scrape(l.admin+"/metrics", "lookup_projector_applied_sequence")
		if err != nil {
			return err
		}
		if uint64(v) < seq {
			return fmt.Errorf("applied sequence %v", v)
		}
		return nil
	})
}

func scrape(url, name string) (float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == name {
			return strconv.ParseFloat(f[1], 64)
		}
	}
	return 0, fmt.Errorf("metric %s not on %s", name, url)
}

func expectStatus(url string, want int) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("GET %s: got %d, want %d", url, resp.StatusCode, want)
	}
	return nil
}

func dumpLogs(ctx context.Context, t *testing.T, c testcontainers.Container) {
	t.Helper()
	if c == nil {
		return
	}
	rc, err := c.Logs(ctx)
	if err != nil {
		t.Logf("logs: %v", err)
		return
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	t.Logf("container logs (tail):\n%s", b)
}

// issuer signs tokens with an RSA key whose public half is the JWKS that
// lookupd verifies against.
type issuer struct {
	*testkit.Issuer
	jwks []byte
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := testkit.NewRSAIssuer(t)
	return &issuer{Issuer: is, jwks: is.JWKS}
}

// token returns a signed token with the given scope, valid for ttl from now
// (a negative ttl gives an expired token).
func (is *issuer) token(t *testing.T, scope string, ttl time.Duration) string {
	t.Helper()
	return is.tokenWith(t, scope, ttl, nil)
}

// tokenWith is token with extra claims.
func (is *issuer) tokenWith(t *testing.T, scope string, ttl time.Duration, claims map[string]any) string {
	t.Helper()
	now := time.Now().Truncate(time.Second)
	iat := now
	if ttl < 0 {
		iat = now.Add(2 * ttl)
	}
	b := jwt.NewBuilder().
		Issuer(testIssuer).Audience([]string{testAudience}).Subject("integration").
		IssuedAt(iat).NotBefore(iat).Expiration(now.Add(ttl)).
		Claim("scope", scope)
	for k, v := range claims {
		b = b.Claim(k, v)
	}
	return is.Sign(t, b)
}

// response is an HTTP answer of the API.
type response struct {
	status int
	header http.Header
	body   []byte
}

// getOK is get that fails the test unless the answer is a 200.
func getOK(t *testing.T, base, path, token string) response {
	t.Helper()
	r := get(t, base, path, token)
	if r.status != http.StatusOK {
		t.Fatalf("status: got %d, want 200: %s", r.status, r.body)
	}
	return r
}

// get sends GET base+path with the bearer token (none when token is "").
func get(t *testing.T, base, path, token string) response {
	t.Helper()
	r, err := testkit.HTTPGet(nil, base+path, token, map[string]string{"Accept": "application/json"})
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return response{status: r.Status, header: r.Header, body: r.Body}
}

// writeFile writes b to a new file in a world-readable temp dir (for bind
// mounts read by the container's non-root user) and returns its path.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
