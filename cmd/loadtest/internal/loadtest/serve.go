package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// ServeConfig is how StartServe runs "lookupd serve": the settings a serve
// cannot start without, nothing else. Every other setting keeps its
// default, memory budget included, unless Extra names it.
type ServeConfig struct {
	Bin      string // the lookupd binary
	DataDir  string // LOOKUP_DATA_DIR
	NATS     string // LOOKUP_NATS_URL
	Stream   string // LOOKUP_STREAM
	JWKSFile string // LOOKUP_JWKS_FILE
	Issuer   string // LOOKUP_ISSUER
	Audience string // LOOKUP_AUDIENCE
	// TLSCertFile and TLSKeyFile, when set, make the API listener HTTPS
	// (LOOKUP_TLS_CERT_FILE, LOOKUP_TLS_KEY_FILE); the admin one stays
	// plain HTTP.
	TLSCertFile, TLSKeyFile string
	Extra                   []string // more flags, appended last
	// Command, when set, makes the process instead of exec.Command: the
	// soak's runs lookupd in a memory cgroup from its birth (its
	// Cgroup.Command).
	Command func(name string, args ...string) *exec.Cmd
}

// StartServe starts c.Bin as "lookupd serve" with both listeners on free
// loopback ports, and returns once its log has named both addresses (or
// ctx ends, or it exits). It does not wait for the read model to catch up:
// poll the admin listener's /readyz for that. Variables LOOKUP_* of this
// process are not passed on. The returned Dev has API, Admin, NATS and
// Stream set; Stop and Logs work as for "lookupd dev".
func StartServe(ctx context.Context, c ServeConfig) (*Dev, error) {
	args := append([]string{"serve", "--data-dir", c.DataDir, "--nats-url", c.NATS, "--stream", c.Stream,
		"--jwks-file", c.JWKSFile, "--issuer", c.Issuer, "--audience", c.Audience,
		"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"}, c.Extra...)
	scheme := "http://"
	if c.TLSCertFile != "" {
		args = append(args, "--tls-cert-file", c.TLSCertFile, "--tls-key-file", c.TLSKeyFile)
		scheme = "https://"
	}
	cmd := exec.Command(c.Bin, args...) //nolint:gosec // G204: Bin is the lookupd binary the operator named
	if c.Command != nil {
		cmd = c.Command(c.Bin, args...)
	}
	return startListening(ctx, cmd, c.NATS, c.Stream, scheme)
}

// startListening starts cmd, a lookupd server, with LookupdEnv, and
// returns once its log has named the addresses of its "api" and "admin"
// listeners (or ctx ends, or it exits); the API's URL has scheme.
func startListening(ctx context.Context, cmd *exec.Cmd, natsURL, stream, scheme string) (*Dev, error) {
	cmd.Env = LookupdEnv()
	d := &Dev{cmd: cmd, done: make(chan struct{}), logs: NewTail(64 << 10)}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	addrs := make(chan map[string]string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		scanListeners(stderr, d.logs, addrs)
	}()
	go func() {
		<-copied // Wait closes the pipe: read it to the end first
		d.err = cmd.Wait()
		close(d.done)
	}()
	select {
	case a := <-addrs:
		if a["api"] == "" || a["admin"] == "" {
			_ = d.Stop()
			return nil, fmt.Errorf("%s named no listeners; its log ends:\n%s", cmd.Path, d.Logs())
		}
		d.Banner = fixtures.Banner{API: scheme + a["api"], Admin: "http://" + a["admin"], NATS: natsURL, Stream: stream}
		return d, nil
	case <-ctx.Done():
		_ = d.Stop()
		return nil, fmt.Errorf("%s not listening: %w; its log ends:\n%s", cmd.Path, ctx.Err(), d.Logs())
	}
}

// PID returns the process id of the running lookupd.
func (d *Dev) PID() int { return d.cmd.Process.Pid }

// Exited reports whether lookupd has exited (before Stop: it died), and
// how.
func (d *Dev) Exited() (bool, error) {
	select {
	case <-d.done:
		return true, d.err
	default:
		return false, nil
	}
}

// scanListeners copies the log r into logs, line by line, to its end. It
// sends found the address of each listener named by a "listening" line (by
// listener name) as soon as both "api" and "admin" are known, or what it
// has at the end of r if that comes first: found gets one send, and must
// have room for it.
func scanListeners(r io.Reader, logs io.Writer, found chan<- map[string]string) {
	addrs := map[string]string{}
	sent := false
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		_, _ = logs.Write(line)
		if name, addr, ok := parseListening(line); ok && !sent {
			addrs[name] = addr
			if addrs["api"] != "" && addrs["admin"] != "" {
				found <- addrs
				sent = true
			}
		}
		if err != nil {
			if !sent {
				found <- addrs
			}
			return
		}
	}
}

// parseListening reads a JSON log line of lookupd. For the line "listening"
// that serveHTTP writes (msg "listening", listener, addr), it returns the
// listener's name and address; ok is false for any other line.
func parseListening(line []byte) (name, addr string, ok bool) {
	if !bytes.Contains(line, []byte(`"listening"`)) {
		return "", "", false
	}
	var l struct {
		Msg      string `json:"msg"`
		Listener string `json:"listener"`
		Addr     string `json:"addr"`
	}
	if json.Unmarshal(line, &l) != nil || l.Msg != "listening" || l.Listener == "" || l.Addr == "" {
		return "", "", false
	}
	return l.Listener, l.Addr, true
}
