package pgyardstick

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PGConns is the size of the PostgreSQL yardstick's connection pool: one
// connection for each of the load tool's 64 connections.
const PGConns = 64

// personStmt is the prepared statement the yardstick answers with.
const personStmt = "person"

// pgReadyTimeout bounds how long a starting server may take to accept
// connections (crash recovery included).
const pgReadyTimeout = 2 * time.Minute

// PGYardstick is what a user would build instead of lookupd: a net/http
// server answering GET /api/v1/persons/{id} from PostgreSQL, no auth.
type PGYardstick struct {
	URL    string        // base URL of the HTTP server
	PID    int           // the postgres postmaster (its backends are its children: TreeCPU)
	Loaded bool          // whether this start copied the rows in (false: they were there)
	Load   time.Duration // how long preparing the data took: the COPY, or checking it was there

	pm   *postmaster
	pool *pgxpool.Pool
	srv  *http.Server

	once     sync.Once
	closeErr error
}

// StartPostgres serves rows (a person's id, a UUID, and the bytes lookupd
// answers for it) from PostgreSQL. It initdb's a cluster in dir/data
// unless one is there, starts postgres on a free 127.0.0.1 port, copies
// the rows in (COPY) unless the ones there are the same (same ids and
// bodies in the same order), and serves on another free loopback port:
// GET /api/v1/persons/{id} answers 200 with that row's body unchanged
// (Content-Type application/json), or 404 for an id not in rows. rows is
// read once to fingerprint it and once more to copy it in.
//
// PostgreSQL refuses to run as root: as root, initdb and postgres run as
// the user postgres, which is given dir and must be able to reach it
// (DefaultPostgresDir is). When the server binaries are not installed
// the error wraps ErrNoPostgres. Close, or cancelling ctx, stops both
// servers.
func StartPostgres(ctx context.Context, dir string, rows iter.Seq2[string, []byte]) (*PGYardstick, error) {
	binDir, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := pgCredential()
	if err != nil {
		return nil, err
	}
	if err := prepareDir(dir, cred); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := initCluster(binDir, data, cred); err != nil {
		return nil, err
	}
	want := fingerprint(rows)
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	pm, err := startPostmaster(binDir, data, filepath.Join(dir, "postgres.log"), cred, port, sharedBuffersFor(want.Rows, want.Bytes))
	if err != nil {
		return nil, err
	}
	y := &PGYardstick{PID: pm.cmd.Process.Pid, pm: pm}
	if err := y.start(ctx, rows, want); err != nil {
		return nil, errors.Join(err, y.Close())
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = y.Close()
		case <-pm.exited:
		}
	}()
	return y, nil
}

// start waits for the server, loads the rows unless they are there, and
// starts the pool and the HTTP server.
func (y *PGYardstick) start(ctx context.Context, rows iter.Seq2[string, []byte], want rowsPrint) error {
	connString := "host=127.0.0.1 port=" + strconv.Itoa(y.pm.port) + " user=" + pgUser + " dbname=postgres sslmode=disable"
	c, err := y.connect(ctx, connString)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	t0 := time.Now()
	have, err := loadedPrint(ctx, c)
	if err != nil {
		return err
	}
	if have != want {
		if err := loadRows(ctx, c, rows, want); err != nil {
			return err
		}
		y.Loaded = true
	}
	y.Load = time.Since(t0)
	if err := prewarm(ctx, c); err != nil {
		return err
	}
	if y.pool, err = newPGPool(ctx, connString); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	y.srv = &http.Server{Handler: PostgresHandler(y.pool), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = y.srv.Serve(ln) }()
	y.URL = "http://" + ln.Addr().String()
	return nil
}

// connect polls until the server accepts a connection, it exits, ctx
// ends or pgReadyTimeout passes.
func (y *PGYardstick) connect(ctx context.Context, connString string) (*pgx.Conn, error) {
	deadline := time.Now().Add(pgReadyTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := pgx.Connect(ctx, connString)
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("postgres not accepting connections after %v: %w; its log: %s", pgReadyTimeout, err, y.pm.logTail())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-y.pm.exited:
			return nil, fmt.Errorf("postgres exited before accepting connections (%w); its log: %s", cmp.Or(y.pm.err, errors.New("status 0")), y.pm.logTail())
		case <-tick.C:
		}
	}
}

// newPGPool opens PGConns connections, each with personStmt prepared.
func newPGPool(ctx context.Context, connString string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns, cfg.MinConns = PGConns, PGConns
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Prepare(ctx, personStmt, "SELECT body FROM persons WHERE id = $1")
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// Connect them all now, not during the first measured requests.
	conns := make([]*pgxpool.Conn, 0, PGConns)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range PGConns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			pool.Close()
			return nil, err
		}
		conns = append(conns, c)
	}
	return pool, nil
}

// PostgresHandler answers GET /api/v1/persons/{id} with the body pool's
// persons table holds for id: 200 and the bytes unchanged, 404 for an id
// that is not a UUID or not there, 500 if the query fails.
func PostgresHandler(pool *pgxpool.Pool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/persons/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := uuid.Parse(r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		var body []byte
		err = pool.QueryRow(r.Context(), personStmt, pgtype.UUID{Bytes: id, Valid: true}).Scan(&body)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			http.NotFound(w, r)
			return
		case err != nil:
			http.Error(w, "query failed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	return mux
}

// Close stops the HTTP server, closes the pool and stops postgres (a fast
// shutdown, as "pg_ctl stop -m fast"), waiting for it to exit. It is safe
// to call more than once.
func (y *PGYardstick) Close() error {
	y.once.Do(func() {
		var errs []error
		if y.srv != nil {
			if err := y.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs = append(errs, err)
			}
		}
		if y.pool != nil {
			y.pool.Close()
		}
		errs = append(errs, y.pm.stop(time.Minute))
		y.closeErr = errors.Join(errs...)
	})
	return y.closeErr
}

// DefaultPostgresDir is where the load tool keeps the yardstick's
// cluster: under /var/tmp, which the user postgres can reach when the
// tool runs as root (the user's cache directory under /root is not).
// One cluster serves any rows: other rows are copied in over the old.
func DefaultPostgresDir() string { return "/var/tmp/lookupd-loadtest-postgres" }
