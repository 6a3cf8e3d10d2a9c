package pgyardstick

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pgUser is the role the yardstick connects as: initdb's superuser,
// trusted on 127.0.0.1 only.
const pgUser = "loadtest"

// ErrNoPostgres is returned (wrapped) by StartPostgres when PostgreSQL's
// server binaries are not installed; the error says how to install them.
var ErrNoPostgres = errors.New("PostgreSQL is not installed (Debian: apt-get install postgresql)")

// pgBinDir returns the directory of initdb and postgres: the newest
// /usr/lib/postgresql/<major>/bin (Debian's layout), else the directory of
// initdb on PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return pgMajor(b) - pgMajor(a) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	p, err := exec.LookPath("initdb")
	if err != nil {
		return "", ErrNoPostgres
	}
	if p, err = filepath.EvalSymlinks(p); err != nil {
		return "", err
	}
	d := filepath.Dir(p)
	if !isFile(filepath.Join(d, "postgres")) {
		return "", fmt.Errorf("%w: no postgres beside %s", ErrNoPostgres, p)
	}
	return d, nil
}

// pgMajor is the <major> of /usr/lib/postgresql/<major>/bin, 0 if none.
func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// pgCredential is who runs initdb and postgres: this process's user,
// except that PostgreSQL refuses root, so root runs them as the system
// user "postgres" (Debian's package creates it) and hands dir to it.
func pgCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL must run as the user postgres: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user postgres: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// prepareDir creates dir and, when cred is set, gives it to cred's user
// after checking that the user can reach it: every directory above it
// must be searchable by others (e.g. /var/tmp, not /root).
func prepareDir(dir string, cred *syscall.Credential) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if cred == nil {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		searchable := fi.Mode().Perm()&0o001 != 0 || ok && st.Uid == cred.Uid && fi.Mode().Perm()&0o100 != 0 ||
			ok && st.Gid == cred.Gid && fi.Mode().Perm()&0o010 != 0
		if !searchable {
			return fmt.Errorf("the user postgres (uid %d) cannot reach %s: %s is not searchable by it; choose a directory under /var/tmp or /tmp", cred.Uid, abs, d)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return root.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
}

// pgCommand returns the PostgreSQL program name in binDir run as cred
// with a minimal environment (no PG* variables of ours).
func pgCommand(binDir string, cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, name), args...) //nolint:gosec // G204: PostgreSQL's own binaries, our arguments
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd
}

// initCluster runs initdb into data unless a cluster of binDir's major
// version is there already; a cluster of another version is removed
// first (it is only a cache of the rows).
func initCluster(binDir, data string, cred *syscall.Credential) error {
	if v, err := os.ReadFile(filepath.Join(data, "PG_VERSION")); err == nil { //nolint:gosec // G304: our data directory
		if m := pgMajor(binDir); m == 0 || strings.TrimSpace(string(v)) == strconv.Itoa(m) {
			return nil
		}
		if err := os.RemoveAll(data); err != nil {
			return err
		}
	}
	cmd := pgCommand(binDir, cred, "initdb", "-D", data, "-U", pgUser, "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, lastBytes(out, 2000))
	}
	return nil
}

// pgSettings are the server's settings for a read benchmark over rows
// loaded once: sharedBuffers holds every row and the index, so that a
// read is served from PostgreSQL's own cache. fsync, full-page writes and
// synchronous commit are off, and the WAL minimal, because the data is a
// copy made once (a crash only means loading it again) and nothing is
// written while it is measured: they change loading time, not reads.
// Only TCP on 127.0.0.1: no Unix socket directory to own.
func pgSettings(port int, sharedBuffers int64) []string {
	s := []string{
		"listen_addresses=127.0.0.1",
		"port=" + strconv.Itoa(port),
		"unix_socket_directories=",
		"max_connections=100",
		"shared_buffers=" + strconv.FormatInt(sharedBuffers>>20, 10) + "MB",
		"fsync=off",
		"full_page_writes=off",
		"synchronous_commit=off",
		"wal_level=minimal",
		"max_wal_senders=0",
		"max_wal_size=8GB",
		"checkpoint_timeout=1h",
		"jit=off",
		"logging_collector=off",
		"log_min_messages=warning",
	}
	args := make([]string, 0, 2*len(s))
	for _, kv := range s {
		args = append(args, "-c", kv)
	}
	return args
}

// sharedBuffersFor sizes shared_buffers for rows of bodyBytes in all: the
// bodies, about 120 bytes a row for the tuple, its id and the primary
// key's entry, a quarter more for pages' free space, and 128 MiB besides.
func sharedBuffersFor(rows, bodyBytes int64) int64 {
	return (bodyBytes+120*rows)*5/4 + 128<<20
}

// freeLoopbackPort returns a TCP port on 127.0.0.1 that was free a moment
// ago.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// postmaster is a running postgres server, a child of this process.
type postmaster struct {
	cmd    *exec.Cmd
	port   int
	log    string        // its log file
	exited chan struct{} // closed when it has exited
	err    error         // its exit status, set before exited is closed
}

// startPostmaster starts postgres on data with settings, its output in
// logPath. It sends postgres SIGINT (a fast shutdown) if this process
// dies first.
func startPostmaster(binDir, data, logPath string, cred *syscall.Credential, port int, sharedBuffers int64) (*postmaster, error) {
	logf, err := os.Create(logPath) //nolint:gosec // G304: our directory
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := pgCommand(binDir, cred, "postgres", append([]string{"-D", data}, pgSettings(port, sharedBuffers)...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pm := &postmaster{cmd: cmd, port: port, log: logPath, exited: make(chan struct{})}
	go func() {
		pm.err = cmd.Wait()
		close(pm.exited)
	}()
	return pm, nil
}

// stop shuts the server down as "pg_ctl stop -m fast" does (SIGINT:
// clients disconnected, a checkpoint, exit) and waits for it to exit,
// killing it after timeout.
func (pm *postmaster) stop(timeout time.Duration) error {
	select {
	case <-pm.exited:
		return nil
	default:
	}
	if err := pm.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-pm.exited:
		return nil
	case <-time.After(timeout):
		_ = pm.cmd.Process.Kill()
		<-pm.exited
		return fmt.Errorf("postgres did not stop within %v of SIGINT: killed", timeout)
	}
}

// logTail returns the end of the server's log, for an error.
func (pm *postmaster) logTail() string {
	b, _ := os.ReadFile(pm.log)
	return lastBytes(b, 2000)
}

// lastBytes returns the last n bytes of b, trimmed.
func lastBytes(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}
