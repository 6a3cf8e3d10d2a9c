//go:build integration

package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// The reply inbox prefixes of deploy/nats/auth.conf: only the user itself may
// subscribe to its inbox.
const (
	lookupdInboxPrefix    = "_INBOX_lookupd"
	accountingInboxPrefix = "_INBOX_accounting"
	adminInboxPrefix      = "_INBOX_admin"
)

// secrets is a directory made by deploy/gen-secrets.sh.
type secrets struct {
	dir string
	env map[string]string // nats.env: the bcrypt hashes and JS_KEY
}

// genSecrets runs deploy/gen-secrets.sh into a new temp dir, as an operator
// does before the first `docker compose up`.
func genSecrets(t *testing.T) *secrets {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "secrets")
	cmd := exec.Command("../deploy/gen-secrets.sh", dir)
	cmd.Env = append(os.Environ(), "NATSCLI_IMAGE="+natscliImage)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-secrets.sh: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "nats.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		env[k] = strings.Trim(v, "'")
	}
	for _, k := range []string{"NATS_ADMIN_PASSWORD_HASH", "NATS_LOOKUPD_PASSWORD_HASH", "NATS_ACCOUNTING_PASSWORD_HASH", "NATS_PUBLISHER_PASSWORD_HASH", "JS_KEY"} {
		if env[k] == "" {
			t.Fatalf("nats.env has no %s", k)
		}
	}
	return &secrets{dir: dir, env: env}
}

// file returns the path of a file of the secrets dir.
func (s *secrets) file(parts ...string) string {
	return filepath.Join(append([]string{s.dir}, parts...)...)
}

// password returns the clear password of a NATS user.
func (s *secrets) password(t *testing.T, user string) string {
	t.Helper()
	b, err := os.ReadFile(s.file(user, "password"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// tlsConfig is the TLS client configuration of user: the CA, and the
// user's client certificate unless user is "". The server name is "nats"
// (a SAN of the server certificate) whatever address is dialled.
func (s *secrets) tlsConfig(t *testing.T, user string) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(s.file("ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("ca.crt: no certificate")
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: "nats", MinVersion: tls.VersionTLS12}
	if user != "" {
		cert, err := tls.LoadX509KeyPair(s.file(user, "tls.crt"), s.file(user, "tls.key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg
}

// serverFiles are the files of a secure nats-server container: the
// configuration conf and the users auth (files of deploy/, in /etc/nats
// under their own names, so that conf's include finds auth) and the server
// certificate of s in /etc/nats-tls.
func (s *secrets) serverFiles(conf, auth string) []testcontainers.ContainerFile {
	files := []testcontainers.ContainerFile{
		{HostFilePath: conf, ContainerFilePath: "/etc/nats/" + filepath.Base(conf), FileMode: 0o644},
		{HostFilePath: auth, ContainerFilePath: "/etc/nats/" + filepath.Base(auth), FileMode: 0o644},
	}
	for _, f := range []string{"tls.crt", "tls.key", "ca.crt"} {
		files = append(files, testcontainers.ContainerFile{
			HostFilePath: s.file("nats-tls", f), ContainerFilePath: "/etc/nats-tls/" + f, FileMode: 0o644,
		})
	}
	return files
}

// startSecureCluster starts n nodes (nats-0.nats ...) of deploy/k8s/nats/nats.conf
// with deploy/nats/auth.conf, the server certificate and nats.env of s,
// and returns their network, the containers and their client URLs
// (tls://host:port).
func startSecureCluster(ctx context.Context, t *testing.T, s *secrets, n int) (string, []testcontainers.Container, []string) {
	t.Helper()
	nw := newNetwork(ctx, t)
	files := s.serverFiles("../deploy/k8s/nats/nats.conf", "../deploy/nats/auth.conf")
	ctrs := make([]testcontainers.Container, n)
	urls := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		name := fmt.Sprintf("nats-%d", i)
		env := map[string]string{"SERVER_NAME": name}
		for k, v := range s.env {
			env[k] = v
		}
		req := testcontainers.ContainerRequest{
			Image:          natsImage,
			Cmd:            []string{"--config", "/etc/nats/nats.conf"},
			Env:            env,
			Files:          files,
			ExposedPorts:   []string{"4222/tcp"},
			Networks:       []string{nw},
			NetworkAliases: map[string][]string{nw: {name + ".nats"}},
			WaitingFor:     wait.ForLog("Server is ready").WithStartupTimeout(60 * time.Second),
		}
		// In parallel: a node waits for its routes before it is ready.
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctrs[i], errs[i] = testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
		}()
	}
	wg.Wait()
	for i, c := range ctrs {
		testcontainers.CleanupContainer(t, c)
		if errs[i] != nil {
			dumpLogs(ctx, t, c)
			t.Fatalf("start nats-%d: %v", i, errs[i])
		}
		host, err := c.Host(ctx)
		if err != nil {
			t.Fatal(err)
		}
		port, err := c.MappedPort(ctx, "4222/tcp")
		if err != nil {
			t.Fatal(err)
		}
		urls[i] = "tls://" + net.JoinHostPort(host, port.Port())
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range ctrs {
				dumpLogs(context.Background(), t, c)
			}
		}
	})
	return nw, ctrs, urls
}

// asyncErrors collects the asynchronous errors of a connection, such as
// the permission violations the server reports.
type asyncErrors chan error

// waitPermissionViolation waits up to 5s until the server reported a
// permission violation for subject.
func (ae asyncErrors) waitPermissionViolation(subject string) error {
	const timeout = 5 * time.Second
	deadline := time.After(timeout)
	var seen []string
	for {
		select {
		case err := <-ae:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) {
				return nil
			}
			seen = append(seen, err.Error())
		case <-deadline:
			return fmt.Errorf("no permission violation for %q within %v (saw %q)", subject, timeout, seen)
		}
	}
}

// jetStreamAs connects as user, with its certificate, its password and
// the extra options, and returns the connection, its asynchronous errors
// and its JetStream context; it fails the test when it cannot.
func jetStreamAs(t *testing.T, s *secrets, urls []string, user string, opts ...nats.Option) (*nats.Conn, asyncErrors, jetstream.JetStream) {
	t.Helper()
	nc, ae, err := connectSecure(t, urls, s.tlsConfig(t, user), user, s.password(t, user), opts...)
	if err != nil {
		t.Fatalf("%s connect: %v", user, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, ae, js
}

// connectSecure connects as user (password pw, "" for none) with tlsCfg and
// the given extra options; the connection is closed at the end of the test.
func connectSecure(t *testing.T, urls []string, tlsCfg *tls.Config, user, pw string, opts ...nats.Option) (*nats.Conn, asyncErrors, error) {
	t.Helper()
	ae := make(asyncErrors, 64)
	all := []nats.Option{
		nats.Secure(tlsCfg), nats.Timeout(5 * time.Second), nats.MaxReconnects(-1),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case ae <- err:
			default:
			}
		}),
	}
	if user != "" {
		all = append(all, nats.UserInfo(user, pw))
	}
	nc, err := nats.Connect(strings.Join(urls, ","), append(all, opts...)...)
	if err != nil {
		return nil, ae, err
	}
	t.Cleanup(nc.Close)
	return nc, ae, nil
}

// copyStore returns the bytes of the JetStream store of the nats-server
// container id, failing when there are none.
func copyStore(t *testing.T, id string) []byte {
	t.Helper()
	return copyFiles(t, id, "/data/jetstream")
}

// copyFiles copies the directory dir of container id to a new temp dir and
// returns all its files' bytes, failing when there are none (a grep of
// nothing would prove nothing).
func copyFiles(t *testing.T, id, src string) []byte {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("docker", "cp", id+":"+src, dir).CombinedOutput(); err != nil {
		t.Fatalf("docker cp: %v: %s", err, out)
	}
	var all []byte
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		all = append(all, b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatalf("%s of the container has no files: a grep of them would prove nothing", src)
	}
	return all
}
