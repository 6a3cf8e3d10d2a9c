package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// env returns a getenv over m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// publish publishes events through events.Publisher.
func publish(t *testing.T, js jetstream.JetStream, data ...any) {
	t.Helper()
	p := events.NewPublisher(js)
	for _, d := range data {
		ev, err := events.NewEvent("urn:test", 1, d)
		if err != nil {
			t.Fatalf("new event: %v", err)
		}
		if _, err := p.Publish(t.Context(), ev); err != nil {
			t.Fatalf("publish %T: %v", d, err)
		}
	}
}

const (
	testIssuer   = "https://issuer.test"
	testAudience = "lookup-test"
)

// serveEnv is the environment of a serve test on ns with the data in dir.
func serveEnv(t *testing.T, ns *server.Server, dir string) map[string]string {
	return map[string]string{
		"LOOKUP_HTTP_ADDR":        "127.0.0.1:0",
		"LOOKUP_ADMIN_ADDR":       "127.0.0.1:0",
		"LOOKUP_NATS_URL":         ns.ClientURL(),
		"LOOKUP_DATA_DIR":         dir,
		"LOOKUP_JWKS_FILE":        writeJWKS(t),
		"LOOKUP_ISSUER":           testIssuer,
		"LOOKUP_AUDIENCE":         testAudience,
		"LOOKUP_SHUTDOWN_TIMEOUT": "20s",
	}
}

// testDemoData returns the demo data set (dev.New), failing the test
// if it cannot be built.
func testDemoData(t *testing.T) *dev.DemoData {
	t.Helper()
	d, err := dev.NewDemoData()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runNATS starts an in-process NATS server with JetStream on a random port,
// storing in a temporary directory, stopped when the test ends.
func runNATS(t *testing.T) *server.Server {
	t.Helper()
	return testkit.RunNATS(t, nil)
}

// jetStream connects to ns and returns its JetStream context.
func jetStream(t *testing.T, ns *server.Server) jetstream.JetStream {
	t.Helper()
	_, js := testkit.ConnectNATS(t, ns.ClientURL())
	return js
}

// personsNATS starts an in-process NATS server with the stream PERSONS and
// returns it and a JetStream context on it.
func personsNATS(t *testing.T) (*server.Server, jetstream.JetStream) {
	t.Helper()
	ns := runNATS(t)
	js := jetStream(t, ns)
	createStream(t, js, "PERSONS")
	return ns, js
}

// oneConsumerNATS returns a NATS server (see personsNATS) whose PERSONS
// stream holds one consumer, and that consumer.
func oneConsumerNATS(t *testing.T) (*server.Server, jetstream.JetStream, events.Consumer) {
	t.Helper()
	ns, js := personsNATS(t)
	c := events.Consumer{ConsumerID: dev.DemoID("u-consumer", 0), BusinessID: dev.DemoID("business", 0), FirstName: "A", LastName: "B"}
	publish(t, js, c)
	return ns, js, c
}

// freePort returns a loopback TCP port that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// adaConsumer returns the consumer Ada Lovelace, of the first demo
// business, with the id dev.ID(prefix, 0).
func adaConsumer(t *testing.T, prefix string) events.Consumer {
	t.Helper()
	data := testDemoData(t)
	return events.Consumer{ConsumerID: dev.DemoID(prefix, 0), BusinessID: data.Businesses[0], FirstName: "Ada", LastName: "Lovelace"}
}

// createStream creates the stream name as deployed (subjects persons.>).
func createStream(t *testing.T, js jetstream.JetStream, name string) {
	t.Helper()
	if _, err := js.CreateStream(t.Context(), dev.PersonsStream(name)); err != nil {
		t.Fatalf("create stream: %v", err)
	}
}

// testKey is an RSA key shared by the tests (generating one is slow).
var testKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// writeJWKS writes the JWKS of testKey to a file and returns its path.
func writeJWKS(t *testing.T) string {
	t.Helper()
	b, err := dev.PublicJWKS(testKey())
	if err != nil {
		t.Fatalf("jwks: %v", err)
	}
	p := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// token mints a token with testKey.
func token(t *testing.T, req dev.TokenRequest) string {
	t.Helper()
	if req.TTL == 0 {
		req.TTL = time.Hour
	}
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	if req.Scope == "" {
		req.Scope = "read:persons"
	}
	tok, err := dev.Mint(testKey(), req)
	if err != nil {
		t.Fatalf("mint token: %v", err)
	}
	return tok
}

// program is one run of the whole program, started by start.
type program struct {
	stdout, stderr *testkit.LogBuffer
	cancel         context.CancelFunc
	done           chan error
}

// start runs the program with args and environment in the background.
// The test ends it (cancelling its context) when it ends, if still running.
func start(t *testing.T, environ map[string]string, args ...string) *program {
	t.Helper()
	return startFunc(t, "program", func(ctx context.Context, stdout, stderr io.Writer) error {
		return run(ctx, args, env(environ), stdout, stderr)
	})
}

// startFunc runs f in the background as the program what, with the
// program's context and output; the test ends it (cancelling its context)
// when it ends, if still running.
func startFunc(t *testing.T, what string, f func(ctx context.Context, stdout, stderr io.Writer) error) *program {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &program{stdout: &testkit.LogBuffer{}, stderr: &testkit.LogBuffer{}, cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- f(ctx, p.stdout, p.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-p.done: //nolint:errcheck // the test asserts on the outcome it cares about; here the program only has to stop
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not stop within 30s", what)
		}
	})
	return p
}

// wait returns the program's error once it has ended.
func (p *program) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // keep it for Cleanup
		return err
	case <-time.After(timeout):
		t.Fatalf("program still running after %v; stderr:\n%s", timeout, p.stderr)
		return nil
	}
}

// addrs polls the program's JSON logs for the "listening" lines and
// returns the bound address of each listener ("api", "admin").
func (p *program) addrs(t *testing.T) map[string]string {
	t.Helper()
	var got map[string]string
	testkit.WaitFor(t, 20*time.Second, func() error {
		got = map[string]string{}
		sc := bufio.NewScanner(strings.NewReader(p.stderr.String()))
		for sc.Scan() {
			var line struct {
				Msg      string `json:"msg"`
				Listener string `json:"listener"`
				Addr     string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				got[line.Listener] = line.Addr
			}
		}
		if got["api"] == "" || got["admin"] == "" {
			select {
			case err := <-p.done:
				p.done <- err
				t.Fatalf("program ended before listening: %v\nstderr:\n%s", err, p.stderr)
			default:
			}
			return fmt.Errorf("no listening lines yet in:\n%s", p.stderr)
		}
		return nil
	})
	return got
}

// get sends a GET with an optional bearer token and returns the status
// and body.
func get(url, tok string) (int, []byte, error) {
	return getWithHeaders(url, tok, nil)
}

// getWithHeaders is get with extra request headers.
func getWithHeaders(url, tok string, headers map[string]string) (int, []byte, error) {
	r, err := testkit.HTTPGet(nil, url, tok, headers)
	return r.Status, r.Body, err
}

// waitReady polls /readyz on the admin address until it answers 200.
func waitReady(t *testing.T, admin string) {
	t.Helper()
	waitOK(t, 30*time.Second, "http://"+admin+"/readyz", "")
}

// waitOK polls GET url (with the bearer token tok, if any) until it
// answers 200, for at most timeout.
func waitOK(t *testing.T, timeout time.Duration, url, tok string) {
	const want = http.StatusOK
	t.Helper()
	testkit.WaitFor(t, timeout, func() error {
		code, body, err := get(url, tok)
		if err != nil {
			return err
		}
		if code != want {
			return fmt.Errorf("GET %s: %d %s, want %d", url, code, body, want)
		}
		return nil
	})
}

// checkpoint returns the stream sequence of the last event s processed:
// the position a snapshot of it records.
func checkpoint(t *testing.T, s *projector.Store) uint64 {
	t.Helper()
	sn, err := s.Snapshot()
	if err != nil {
		t.Fatalf("snapshot of the store: %v", err)
	}
	defer sn.Close()
	return sn.Info.Position
}
