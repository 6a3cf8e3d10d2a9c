package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// projectionGoal is issue 45's: a read model built from zero at no less
// than this share of the rate of merely draining the stream.
const projectionGoal = 0.45

// projectionRun is one timed pass over the model's stream: a raw drain or
// a projection from zero.
type projectionRun struct {
	took           time.Duration
	cpu, brokerCPU time.Duration // the reading process's, the broker's
	events         uint64
	peakRSS        int64 // the reading process's, bytes (0: unknown)
	drain          bool  // a raw drain; else lookupd project
}

func (r projectionRun) rate() float64 { return float64(r.events) / r.took.Seconds() }

// measureProjection times, rounds times in turn, a raw drain of the
// model's stream and a projection of it from zero. The drain is an
// ordered consumer in this process reading every message and its
// metadata, as the projector's does before it decodes anything; the
// projection is the real binary, "lookupd project --until-caught-up", in
// its default configuration, into an empty data directory, from start to
// exit. Their ratio is the projection's share of the ceiling the broker
// and the client library set.
func measureProjection(ctx context.Context, bin, dir string, m *model, rounds int, progress io.Writer) ([]projectionRun, error) {
	var runs []projectionRun
	for round := range rounds {
		d, err := drainModel(ctx, m)
		if err != nil {
			return nil, fmt.Errorf("drain the model's stream: %w", err)
		}
		fmt.Fprintf(progress, "projection round %d: drain of %d events in %v\n", round+1, d.events, d.took.Round(time.Millisecond))
		p, err := projectModel(ctx, bin, filepath.Join(dir, fmt.Sprintf("project-%d", round)), m)
		if err != nil {
			return nil, fmt.Errorf("lookupd project: %w", err)
		}
		fmt.Fprintf(progress, "projection round %d: lookupd project of %d events in %v\n", round+1, p.events, p.took.Round(time.Millisecond))
		runs = append(runs, d, p)
	}
	return runs, nil
}

// drainModel reads the model's stream to its last message with an ordered
// consumer and the projector's pull size.
func drainModel(ctx context.Context, m *model) (projectionRun, error) {
	last := m.manifest.LastSeq
	nc, err := nats.Connect(m.broker.URL, nats.Name("lookupd-loadtest-drain"))
	if err != nil {
		return projectionRun{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return projectionRun{}, err
	}
	stream, err := js.Stream(ctx, loadtest.Stream)
	if err != nil {
		return projectionRun{}, err
	}
	cpu0, _ := loadtest.ProcessCPU(os.Getpid())
	broker0, _ := loadtest.ProcessCPU(m.broker.PID())
	start := time.Now()
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return projectionRun{}, err
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(2000))
	if err != nil {
		return projectionRun{}, err
	}
	defer it.Stop()
	for {
		msg, err := it.Next()
		if err != nil {
			return projectionRun{}, err
		}
		md, err := msg.Metadata()
		if err != nil {
			return projectionRun{}, err
		}
		if md.Sequence.Stream >= last {
			break
		}
	}
	r := projectionRun{took: time.Since(start), events: last, drain: true}
	cpu1, _ := loadtest.ProcessCPU(os.Getpid())
	broker1, _ := loadtest.ProcessCPU(m.broker.PID())
	r.cpu, r.brokerCPU = cpu1-cpu0, broker1-broker0
	return r, nil
}

// projectModel runs "lookupd project --until-caught-up" on the model's
// stream into dataDir, empty, and removes it afterwards.
func projectModel(ctx context.Context, bin, dataDir string, m *model) (projectionRun, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return projectionRun{}, err
	}
	defer os.RemoveAll(dataDir)
	cmd := exec.CommandContext(ctx, bin, "project", "--until-caught-up", "--data-dir", dataDir, //nolint:gosec // G204: the lookupd binary the operator named
		"--nats-url", m.broker.URL, "--stream", loadtest.Stream)
	cmd.Env = loadtest.LookupdEnv()
	logs := loadtest.NewTail(4 << 10)
	cmd.Stdout, cmd.Stderr = logs, logs
	broker0, _ := loadtest.ProcessCPU(m.broker.PID())
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return projectionRun{}, err
	}
	peak := sampleHWM(cmd.Process.Pid)
	err := cmd.Wait()
	took := time.Since(start)
	peakRSS := peak()
	broker1, _ := loadtest.ProcessCPU(m.broker.PID())
	if err != nil {
		return projectionRun{}, fmt.Errorf("%w\n%s", err, logs.String())
	}
	st := cmd.ProcessState
	r := projectionRun{took: took, cpu: st.UserTime() + st.SystemTime(), brokerCPU: broker1 - broker0,
		events: m.manifest.LastSeq}
	r.peakRSS = peakRSS
	return r, nil
}

// writeProjection writes the projection's table and its goal.
func writeProjection(w io.Writer, runs []projectionRun) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nProjection from zero against a raw drain of the model's stream (in turn; the drain an ordered consumer in the load tool reading each message and its metadata, the projection `lookupd project --until-caught-up` in its default configuration into an empty directory, start to exit):")
	fmt.Fprintln(w, "\n| run | events | took | events/s | CPU µs an event | broker CPU µs an event | peak RSS (VmHWM sampled every 100 ms), mapped files included |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|")
	var ratios []float64
	var drain float64
	for _, r := range runs {
		name, rss := "lookupd project", "-"
		if r.drain {
			name, drain = "raw drain", r.rate()
		} else if drain > 0 {
			ratios = append(ratios, r.rate()/drain)
		}
		if r.peakRSS > 0 {
			rss = fmt.Sprintf("%d MiB", r.peakRSS>>20)
		}
		fmt.Fprintf(w, "| %s | %d | %v | %s | %.1f | %.1f | %s |\n", name, r.events, r.took.Round(time.Millisecond),
			loadtest.Thousands(r.rate()), float64(r.cpu.Microseconds())/float64(r.events), float64(r.brokerCPU.Microseconds())/float64(r.events), rss)
	}
	for i, q := range ratios {
		fmt.Fprintf(w, "\nRound %d: the projection at **%.2fx** of the drain (issue 45: at least %.2fx): %s\n", i+1, q, projectionGoal, passFail(q >= projectionGoal))
	}
}

// sampleHWM samples the peak resident set of process pid (VmHWM, its
// own: the rusage of a child started with vfork also counts the parent's,
// here gigabytes of the load tool's) every 100 ms until the returned
// function is called, after the process has ended; that returns the last
// sample, in bytes (0: none read).
func sampleHWM(pid int) func() int64 {
	var last atomic.Int64
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if hwm, err := loadtest.ReadPeakRSS(pid); err == nil && hwm > 0 {
				last.Store(hwm)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-ended
		return last.Load()
	}
}
