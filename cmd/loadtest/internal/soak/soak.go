package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// soakLoaded is what loading the read model took.
type soakLoaded struct {
	loadtest.Loaded
	CaughtUp time.Duration // lookupd serve from its start to having applied them
	AtReady  MemSample
}

// soakRun is what the soak itself measured.
type soakRun struct {
	Lookups loadtest.Result
	Events  Paced
	Samples []MemSample
	CPU     soakCPU
}

// soakCPU is the CPU time (user and system) that each process of a soak
// used while the load ran, and how long that was: on a host whose cores
// the three share, whether lookupd's latency is its own or a queue for
// the cores.
type soakCPU struct {
	Lookupd, Broker, Tool time.Duration
	Wall                  time.Duration
}

// share returns d as a percentage of one core over c.Wall, "n/a" when
// nothing was measured (d < 0: the process could not be read before or
// after the load, as when the OOM killer ended it).
func (c soakCPU) share(d time.Duration) string {
	if c.Wall <= 0 || d < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*d.Seconds()/c.Wall.Seconds())
}

// cpuTimes returns the CPU times so far of lookupd (pid), the broker
// (brokerPID) and this process; -1 for a process that cannot be read.
func cpuTimes(pid, brokerPID int) soakCPU {
	read := func(pid int) time.Duration {
		d, err := loadtest.ProcessCPU(pid)
		if err != nil {
			return -1
		}
		return d
	}
	return soakCPU{Lookupd: read(pid), Broker: read(brokerPID), Tool: read(0)}
}

// since returns the CPU times used from c0 to c, over wall: -1 for a
// process not read at either end.
func (c soakCPU) since(c0 soakCPU, wall time.Duration) soakCPU {
	delta := func(d1, d0 time.Duration) time.Duration {
		if d1 < 0 || d0 < 0 {
			return -1
		}
		return d1 - d0
	}
	return soakCPU{Lookupd: delta(c.Lookupd, c0.Lookupd), Broker: delta(c.Broker, c0.Broker),
		Tool: delta(c.Tool, c0.Tool), Wall: wall}
}

// soakEnv is what every lookupd of a soak is started with.
type soakEnv struct {
	bin, dir, natsURL string
	brokerPID         int      // the NATS server's process
	jwks              string   // the JWKS file verifying toks
	toks              []string // tokens for the lookups
	js                jetstream.JetStream
	pop               *fixtures.Population
	client            *http.Client
}

// storeDir is the soak's read model directory.
func (e soakEnv) storeDir() string { return filepath.Join(e.dir, "store") }

// Run runs the memory soak: a broker in a process of its own with the
// deployed stream, o.soak's people and signers published into it, then
// "lookupd serve" with its defaults (but for what it cannot start without
// and o.serveFlags) catching up with them; then twice, on that read
// model with its page cache dropped, o.duration of lookups and events
// at fixed rates while lookupd's memory is sampled, in a memory cgroup
// without a limit and in one of o.limit. It writes the samples, the
// two runs side by side and the criteria as Markdown on stdout.
func Run(ctx context.Context, o Options, tokens, openWorkers int, bin, dir string, stdout, stderr io.Writer) (err error) {
	o.tokens, o.openWorkers = tokens, openWorkers
	m := loadtest.ReadMachine(ctx, bin)
	if err := probeCgroup(); err != nil {
		return err
	}
	broker, err := loadtest.StartBroker(ctx, filepath.Join(dir, "nats"))
	if err != nil {
		return err
	}
	defer broker.Close()
	nc, err := nats.Connect(broker.URL, nats.Name("lookupd-loadtest-soak"))
	if err != nil {
		return fmt.Errorf("connect to the soak's NATS server: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(fixtures.PublishWindow))
	if err != nil {
		return err
	}
	if err := loadtest.EnsurePersonsStream(ctx, js, loadtest.Stream); err != nil {
		return err
	}
	env := soakEnv{bin: bin, dir: dir, natsURL: broker.URL, brokerPID: broker.PID(), js: js, client: &http.Client{Timeout: 5 * time.Second},
		pop: fixtures.NewPopulation(o.people, o.signers, 1)}
	env.pop.Binary = o.binary
	published, err := loadtest.LoadPopulation(ctx, js, env.pop, stderr)
	if err != nil {
		return err
	}
	loaded := soakLoaded{Loaded: published}
	if env.jwks, env.toks, err = soakTokens(ctx, o, bin, dir); err != nil {
		return err
	}
	if err := buildSoakModel(ctx, o, env, &loaded, stderr); err != nil {
		return err
	}
	var phases []soakPhaseRun
	for _, limit := range []int64{0, o.limit} {
		p, err := runSoakPhase(ctx, o, env, limit, stderr)
		if err != nil {
			return err
		}
		phases = append(phases, p)
	}
	writeSoakReport(stdout, o, m, loaded, phases)
	return nil
}

// probeCgroup makes and removes a memory cgroup, so that a soak that
// cannot run lookupd in one fails before it builds anything.
func probeCgroup() error {
	cg, err := NewCgroup(fmt.Sprintf("lookupd-soak-probe-%d", os.Getpid()), 0)
	if err != nil {
		return fmt.Errorf("the soak runs lookupd in a memory cgroup, and none can be made here: %w", err)
	}
	return cg.Remove()
}

// buildSoakModel starts lookupd serve (in no cgroup of its own) on the
// empty read model, waits until it has applied the population's events
// and stops it, recording the catch-up in loaded.
func buildSoakModel(ctx context.Context, o Options, env soakEnv, loaded *soakLoaded, progress io.Writer) (err error) {
	srv, err := startSoakServe(ctx, o, env, nil)
	if err != nil {
		return err
	}
	defer func() {
		if serr := srv.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("lookupd serve: %w; its log ends:\n%s", serr, srv.Logs())
		}
	}()
	if loaded.CaughtUp, err = loadtest.WaitCaughtUp(ctx, env.client, srv.Admin, loaded.LastSeq, progress); err != nil {
		return fmt.Errorf("%w; its log ends:\n%s", err, srv.Logs())
	}
	target := Target{PID: srv.PID(), Admin: srv.Admin, DataDir: env.storeDir()}
	loaded.AtReady, err = SampleMem(env.client, target, 0)
	return err
}

// soakTokens creates a signing key and its JWKS in dir and mints
// o.tokens tokens with it; it returns the JWKS file and the tokens.
func soakTokens(ctx context.Context, o Options, bin, dir string) (string, []string, error) {
	keyPath, jwksPath, err := loadtest.CreateKeyIn(ctx, bin, dir)
	if err != nil {
		return "", nil, err
	}
	toks, err := loadtest.MintTokens(ctx, bin, keyPath, loadtest.Scopes, 2*o.duration+3*time.Hour, o.tokens)
	if err != nil {
		return "", nil, err
	}
	return jwksPath, toks, nil
}

// startSoakServe starts lookupd serve reading the stream of env's broker,
// storing in env's store directory, with o.serveFlags, inside cg
// when not nil.
func startSoakServe(ctx context.Context, o Options, env soakEnv, cg *Cgroup) (*loadtest.Dev, error) {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return loadtest.StartServe(sctx, loadtest.ServeConfig{Bin: env.bin, DataDir: env.storeDir(),
		NATS: env.natsURL, Stream: loadtest.Stream, JWKSFile: env.jwks, Issuer: loadtest.Issuer, Audience: loadtest.Audience,
		Extra: o.serveFlags, Command: cgroupCommand(cg)})
}

// soak runs, for o.duration and at once, the lookups (open loop at
// o.rate, at most o.openWorkers in flight), the events (o.events
// a second) and the memory samples of srv (every o.interval, the last
// at the end) as target.
func soak(ctx context.Context, o Options, env soakEnv, srv *loadtest.Dev, target Target, progress io.Writer) (soakRun, error) {
	so := o
	fmt.Fprintf(progress, "soak: %v of %d lookups/s and %d events/s, memory sampled every %v ...\n",
		so.duration, so.rate, so.events, so.interval)
	var (
		run              soakRun
		wg               sync.WaitGroup
		lookErr, pubErr  error
		sctx, stopSample = context.WithTimeout(ctx, so.duration+so.interval/2)
	)
	defer stopSample()
	wg.Go(func() {
		run.Samples = SampleEvery(sctx, env.client, target, so.interval)
	})
	if so.events > 0 {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, so.duration)
			defer cancel()
			run.Events, pubErr = PublishPaced(pctx, env.js, so.events, env.pop.NextRandom)
		})
	}
	start, cpu0 := time.Now(), cpuTimes(srv.PID(), env.brokerPID)
	run.Lookups, lookErr = loadtest.OpenLoopTargets(ctx, "lookupd GET person and GET signers with expand, random consumers",
		LookupTargets(srv.API, env.pop, env.toks), so.rate, so.duration, o.openWorkers)
	run.CPU = cpuTimes(srv.PID(), env.brokerPID).since(cpu0, time.Since(start))
	wg.Wait()
	return run, errors.Join(lookErr, pubErr, ctx.Err())
}

// cgroupCommand returns how a process is made in cg (nil: none, the
// default).
func cgroupCommand(cg *Cgroup) func(string, ...string) *exec.Cmd {
	if cg == nil {
		return nil
	}
	return cg.Command
}
