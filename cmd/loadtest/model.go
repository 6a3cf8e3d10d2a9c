package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// fetchWorkers is how many requests a model build has in flight when it
// captures lookupd's answers.
const fetchWorkers = 16

// sampleChecks is how many drawn people a reused model's stored answers
// are checked for against lookupd (and each configuration against the bare
// server) before anything is measured.
const sampleChecks = 32

// model is the model a run measures: its broker running on its store, its
// people, the answers captured, and what built it.
type model struct {
	key      loadtest.ModelKey
	start    time.Time // when openModel started
	dir      string
	manifest loadtest.Manifest
	pop      *fixtures.Population
	broker   *loadtest.Broker
	bodies   *loadtest.Bodies // while the model is opened; nil after
	bodySize int              // bytes of the captured answers
	reused   bool             // a complete model was found and reused
	took     time.Duration    // what this run spent building it (0 when reused)
	// natsBytes and lookupdBytes are what the broker's store and lookupd's
	// read model take on disk once the model is open (before any audit
	// record of the run).
	natsBytes, lookupdBytes int64
}

// close empties the audit stream (the run's ledger is not kept with the
// model) and stops the broker.
func (m *model) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if nc, err := nats.Connect(m.broker.URL, nats.Name("lookupd-loadtest")); err == nil {
		if js, err := jetstream.New(nc); err == nil {
			_ = js.DeleteStream(ctx, loadtest.AuditStream)
		}
		nc.Close()
	}
	m.broker.Close()
}

// openModel opens the model o.model asks for in its directory, building
// it when no complete one is there (or --rebuild): the broker's store with
// the population's creation events, lookupd's read model caught up with
// them, and every answer captured into the body store; the manifest last.
// A reused model whose answers differ from lookupd's now (another
// rendering) has them captured again.
func openModel(ctx context.Context, o options, env *runEnv, progress io.Writer) (_ *model, err error) {
	mo := o.model
	man, ok, why := loadtest.Reusable(mo.dir, mo.key())
	switch {
	case ok && mo.rebuild:
		ok, why = false, "--rebuild"
	case !ok && why == "":
		why = "none yet"
	}
	if !ok {
		fmt.Fprintf(progress, "building the model in %s (%s) ...\n", mo.dir, why)
		if err := removeModel(mo.dir); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprintf(progress, "reusing the model in %s (built %s)\n", mo.dir, man.Built.Format(time.RFC3339))
	}
	if err := os.MkdirAll(mo.dir, 0o700); err != nil {
		return nil, err
	}
	pop, err := fixtures.NewShapedPopulation(mo.shape(), mo.seed)
	if err != nil {
		return nil, err
	}
	m := &model{key: mo.key(), start: time.Now(), dir: mo.dir, manifest: man, reused: ok, pop: pop}
	if m.broker, err = loadtest.StartBroker(ctx, filepath.Join(mo.dir, loadtest.ModelNATSDir)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			m.close()
		}
	}()
	if err := m.prepareBroker(ctx, progress); err != nil {
		return nil, err
	}
	if err := m.capture(ctx, env, progress); err != nil {
		return nil, err
	}
	if !m.reused {
		m.took = time.Since(m.start)
	}
	m.bodySize, m.bodies = m.bodies.Size(), nil // the bare server reads its own copy
	m.natsBytes, m.lookupdBytes = loadtest.DiskUsage(filepath.Join(m.dir, loadtest.ModelNATSDir)), loadtest.DiskUsage(filepath.Join(m.dir, loadtest.ModelLookupdDir))
	return m, nil
}

// removeModel removes the model in dir, refusing a directory that holds
// anything a model does not (a --model-dir given by mistake).
func removeModel(dir string) error {
	return loadtest.RemoveKept(dir, loadtest.IsModelFile, "model", "--model-dir")
}

// prepareBroker makes the source stream (and, for a new model, publishes
// the population's creation events into it) and empties the audit stream.
func (m *model) prepareBroker(ctx context.Context, progress io.Writer) error {
	nc, err := nats.Connect(m.broker.URL, nats.Name("lookupd-loadtest"))
	if err != nil {
		return fmt.Errorf("connect to the model's NATS server: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(fixtures.PublishWindow))
	if err != nil {
		return err
	}
	if err := js.DeleteStream(ctx, loadtest.AuditStream); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("empty the audit stream: %w", err)
	}
	if err := loadtest.EnsurePersonsStream(ctx, js, loadtest.Stream); err != nil {
		return err
	}
	if m.reused {
		s, err := js.Stream(ctx, loadtest.Stream)
		if err != nil {
			return err
		}
		if last := s.CachedInfo().State.LastSeq; last != m.manifest.LastSeq {
			return fmt.Errorf("the model's stream ends at %d, its manifest says %d: run with --rebuild", last, m.manifest.LastSeq)
		}
		return nil
	}
	loaded, err := loadtest.LoadPopulation(ctx, js, m.pop, progress)
	if err != nil {
		return err
	}
	m.manifest = loadtest.Manifest{ModelKey: m.key, Stream: loadtest.Stream, LastSeq: loaded.LastSeq}
	return nil
}

// capture starts lookupd serve (the ledger off) on the model's read model,
// waits until it has caught up, then for a new model captures every answer
// and writes the manifest, and for a reused one checks a sample of the
// stored answers against lookupd's, capturing them again if they differ.
// It leaves the bodies read into m.
func (m *model) capture(ctx context.Context, env *runEnv, progress io.Writer) error {
	srv, err := env.startServe(ctx, m, serveConf{audit: "off"}, progress)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()
	c := env.client(false)
	if m.reused {
		if m.bodies, err = loadtest.ReadBodies(m.dir); err != nil {
			return fmt.Errorf("%w: run with --rebuild", err)
		}
		idx, _ := loadtest.Draw(fixtures.Uniform, sampleChecks, m.pop.People(), uint64(time.Now().UnixNano())) //nolint:gosec // G115: a seed
		err := loadtest.CheckBodies(c, srv.API, env.buildToken, m.pop, m.bodies, idx)
		if err == nil {
			return nil
		}
		fmt.Fprintf(progress, "lookupd's answers are not the stored ones (%v): capturing them again\n", err)
		if err := loadtest.RemoveManifest(m.dir); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := m.fetch(ctx, c, env, srv.API, progress); err != nil {
		return err
	}
	fmt.Fprintf(progress, "%d answers captured in %v\n", m.manifest.Bodies, time.Since(start).Round(time.Second))
	m.bodies, err = loadtest.ReadBodies(m.dir)
	return err
}

// fetch captures every answer of lookupd serve at api into the body store
// and writes the manifest.
func (m *model) fetch(ctx context.Context, c *http.Client, env *runEnv, api string, progress io.Writer) error {
	w, err := loadtest.NewBodyWriter(m.dir)
	if err != nil {
		return err
	}
	next := time.Now().Add(10 * time.Second)
	f, err := loadtest.FetchBodies(ctx, c, api, env.buildToken, m.pop, w, fetchWorkers, func(done int) {
		if time.Now().After(next) {
			fmt.Fprintf(progress, "  answers of %d of %d people captured\n", done, m.pop.People())
			next = time.Now().Add(10 * time.Second)
		}
	})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	m.manifest.Bodies, m.manifest.PersonHeader, m.manifest.SignersHeader = w.Len(), f.PersonHeader, f.SignersHeader
	m.manifest.Lookupd, m.manifest.Built, m.manifest.BuildTime = loadtest.LookupdVersion(ctx, env.bin), time.Now().UTC(), time.Since(m.start)
	return loadtest.WriteManifest(m.dir, m.manifest)
}
