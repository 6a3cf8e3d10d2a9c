package accountingload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// accountingChain is the replica id of the audit serve a measurement
// runs: the chain its searches are recorded on.
const accountingChain = "accounting-loadtest"

// auditService is "lookupd audit serve" as a measurement runs it: on the
// ledger's stream, with an index of its own in the run's directory,
// restarted on the same index after a SIGKILL.
type auditService struct {
	cfg      loadtest.AuditServeConfig
	srv      *loadtest.Dev
	client   *http.Client
	mem      *memWatch
	pprofDir string // "" for no profiles
}

// newAuditService returns the service of a measurement, not started.
func newAuditService(o Options, bin, dir, natsURL, jwks string) *auditService {
	index := o.index
	if index == "" {
		index = filepath.Join(dir, "accounting")
	}
	cfg := loadtest.AuditServeConfig{Bin: bin, IndexDir: index, NATS: natsURL,
		Stream: loadtest.AuditStream, JWKSFile: jwks, Issuer: loadtest.Issuer, Audience: loadtest.Audience, ReplicaID: accountingChain,
		Extra: o.serveFlags}
	if o.pprofDir != "" {
		cfg.Extra = append([]string{"--pprof", "true"}, cfg.Extra...)
	}
	return &auditService{cfg: cfg, client: &http.Client{Timeout: 10 * time.Second}, mem: newMemWatch(),
		pprofDir: o.pprofDir}
}

// start starts the service and has its memory watched.
func (s *auditService) start(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	srv, err := loadtest.StartAuditServe(sctx, s.cfg)
	if err != nil {
		return err
	}
	s.srv = srv
	s.mem.watch(srv.PID())
	return nil
}

// stop interrupts the service and waits for it to exit.
func (s *auditService) stop() error {
	if s.srv == nil {
		return nil
	}
	s.mem.watch(0)
	err := s.srv.Stop()
	logs := s.srv.Logs()
	s.srv = nil
	if err != nil {
		return fmt.Errorf("lookupd audit serve: %w; its log ends:\n%s", err, logs)
	}
	return nil
}

// cpu returns the CPU time the running service has used.
func (s *auditService) cpu() time.Duration {
	d, _ := loadtest.ProcessCPU(s.srv.PID())
	return d
}

// gcs returns the garbage collections the running service has made
// (-1 when its /metrics does not tell).
func (s *auditService) gcs() int {
	m, err := loadtest.ReadMetrics(s.client, s.srv.Admin, metricGCs)
	if v, ok := m[metricGCs]; err == nil && ok {
		return int(v)
	}
	return -1
}

// metricGCs counts a Go process's garbage collections.
const metricGCs = "go_gc_duration_seconds_count"

// build is what building the index took.
type build struct {
	Records, Messages uint64         // in the stream as built
	Segments          []buildSegment // one, or two around the kill
	KilledAt          uint64         // applied sequence last seen before the SIGKILL (0: no kill)
	Kept              bool           // the index was kept from an earlier run (ResumedAt: where it started)
	ResumedAt         uint64         // applied sequence the restarted service started from
	IndexBytes        int64          // the index's size on disk once built
	// Settled is how long the service took to become idle once caught up
	// (its compactions), SettleCPU the CPU it used meanwhile.
	Settled, SettleCPU time.Duration
}

// buildSegment is one run of the service while it built the index.
type buildSegment struct {
	From, To uint64 // applied sequences at its start and end
	Took     time.Duration
	CPU      time.Duration
	GCs      int // garbage collections
}

// Took returns the time of every segment.
func (b build) Took() time.Duration {
	var d time.Duration
	for _, s := range b.Segments {
		d += s.Took
	}
	return d
}

// GCs returns the garbage collections of every segment.
func (b build) GCs() int {
	n := 0
	for _, s := range b.Segments {
		n += s.GCs
	}
	return n
}

// CPU returns the CPU time of every segment.
func (b build) CPU() time.Duration {
	var d time.Duration
	for _, s := range b.Segments {
		d += s.CPU
	}
	return d
}

// buildIndex starts the service on an empty index and waits until it has
// applied the stream up to last; with killAt, it kills it with SIGKILL
// once it has applied that fraction, restarts it on the same index and
// checks that it resumes from its checkpoint rather than from zero. With
// keep, an index already in the directory is not emptied: the service
// starts on it and catches up, not killed (b.Kept).
func (s *auditService) buildIndex(ctx context.Context, last uint64, killAt float64, keep bool, progress io.Writer) (build, error) {
	b := build{Messages: last}
	if entries, err := os.ReadDir(s.cfg.IndexDir); keep && err == nil && len(entries) > 0 {
		b.Kept, killAt = true, 0
	} else if err := os.RemoveAll(s.cfg.IndexDir); err != nil {
		return b, err
	}
	if err := s.start(ctx); err != nil {
		return b, err
	}
	if b.Kept {
		_, applied, err := loadtest.Readyz(s.client, s.srv.Admin)
		if err != nil {
			return b, fmt.Errorf("audit serve on its kept index: %w", err)
		}
		b.ResumedAt = applied
	}
	s.profile(ctx, "build-cpu.pprof", 25*time.Second)
	if killAt > 0 {
		at := uint64(killAt * float64(last))
		seg, err := s.segment(ctx, 0, at, false, progress)
		if err != nil {
			return b, err
		}
		b.Segments, b.KilledAt = append(b.Segments, seg), seg.To
		fmt.Fprintf(progress, "killing audit serve (SIGKILL) at applied sequence %d of %d\n", seg.To, last)
		s.mem.watch(0)
		s.srv.Kill()
		if err := s.start(ctx); err != nil {
			return b, err
		}
		_, applied, err := loadtest.Readyz(s.client, s.srv.Admin)
		if err != nil {
			return b, fmt.Errorf("audit serve restarted after a SIGKILL: %w", err)
		}
		b.ResumedAt = applied
		fmt.Fprintf(progress, "restarted: it resumes from applied sequence %d\n", applied)
		if applied == 0 || applied+uint64(maxApplyMessages) < seg.To {
			return b, fmt.Errorf("restarted after a SIGKILL at applied sequence %d, audit serve resumes from %d: want its checkpoint", seg.To, applied)
		}
	}
	seg, err := s.segment(ctx, b.ResumedAt, last, true, progress)
	if err != nil {
		return b, err
	}
	b.Segments = append(b.Segments, seg)
	s.heapProfile(ctx, "build-heap.pprof")
	b.Settled, b.SettleCPU = s.settle(ctx)
	b.IndexBytes = loadtest.DiskUsage(s.cfg.IndexDir)
	return b, nil
}

// Settling: once caught up, the service goes on compacting what it wrote
// for a while; the searches are measured once it is idle (a steady state:
// a service that has caught up long ago), that is once it uses less than
// idleCPU of a core over idleWindow, or after maxSettle.
const (
	idleCPU    = 0.05
	idleWindow = 2 * time.Second
	maxSettle  = 10 * time.Minute
)

// settle waits until the running service is idle, and returns how long
// that took and the CPU it used meanwhile.
func (s *auditService) settle(ctx context.Context) (time.Duration, time.Duration) {
	start, cpu0 := time.Now(), s.cpu()
	for time.Since(start) < maxSettle && ctx.Err() == nil {
		before := s.cpu()
		select {
		case <-ctx.Done():
		case <-time.After(idleWindow):
		}
		if float64(s.cpu()-before) < idleCPU*float64(idleWindow) {
			break
		}
	}
	return time.Since(start), s.cpu() - cpu0
}

// maxApplyMessages is how many messages audit serve applies in one
// transaction at most (internal/accounting): what a SIGKILL may lose.
const maxApplyMessages = 256

// segment polls the running service until it has applied until (and,
// with ready, says it is ready), and returns what it did meanwhile.
func (s *auditService) segment(ctx context.Context, from, until uint64, ready bool, progress io.Writer) (buildSegment, error) {
	seg := buildSegment{From: from}
	start, cpu0, gc0 := time.Now(), s.cpu(), s.gcs()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for report := start.Add(10 * time.Second); ; {
		ok, applied, err := loadtest.Readyz(s.client, s.srv.Admin)
		if err == nil && applied >= until && (ok || !ready) {
			seg.To, seg.Took, seg.CPU, seg.GCs = applied, time.Since(start), s.cpu()-cpu0, s.gcs()-gc0
			return seg, nil
		}
		if exited, werr := s.srv.Exited(); exited {
			return seg, fmt.Errorf("lookupd audit serve exited %s; its log ends:\n%s", loadtest.ErrText(werr), s.srv.Logs())
		}
		if time.Now().After(report) {
			fmt.Fprintf(progress, "  applied %d of %d (%s)\n", applied, until, time.Since(start).Round(time.Second))
			report = time.Now().Add(10 * time.Second)
		}
		select {
		case <-ctx.Done():
			return seg, ctx.Err()
		case <-t.C:
		}
	}
}

// profile writes a CPU profile of the next d of the running service into
// name in the profile directory, in the background (nothing without one).
func (s *auditService) profile(ctx context.Context, name string, d time.Duration) {
	if s.pprofDir == "" {
		return
	}
	url := s.srv.Admin + "/debug/pprof/profile?seconds=" + strconv.Itoa(int(d.Seconds()))
	go func() { _ = fetchTo(ctx, url, filepath.Join(s.pprofDir, name)) }()
}

// heapProfile writes the running service's heap profile into name in the
// profile directory (nothing without one).
func (s *auditService) heapProfile(ctx context.Context, name string) {
	if s.pprofDir != "" {
		_ = fetchTo(ctx, s.srv.Admin+"/debug/pprof/heap", filepath.Join(s.pprofDir, name))
	}
}

// fetchTo GETs url into the file path.
func fetchTo(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil) //nolint:gosec // G704: the admin listener of a process this tool started
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req) //nolint:gosec // G704: the admin listener of the service this tool started
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.Create(path) //nolint:gosec // G304: the profile directory given
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// memWatch samples the memory of the process it watches, and keeps the
// peaks of each phase.
type memWatch struct {
	mu    sync.Mutex
	pid   int
	phase string
	peaks map[string]*memPeak
	stop  chan struct{}
}

// memPeak is the most memory a phase saw.
type memPeak struct {
	RSS, Anon, File, HWM int64
}

func newMemWatch() *memWatch {
	w := &memWatch{peaks: map[string]*memPeak{}, phase: "build", stop: make(chan struct{})}
	go w.run()
	return w
}

// watch makes pid the process sampled (0: none).
func (w *memWatch) watch(pid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sampleLocked()
	w.pid = pid
}

// enter starts phase: later samples count towards its peaks.
func (w *memWatch) enter(phase string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sampleLocked()
	w.phase = phase
}

// peak returns the peaks of phase.
func (w *memWatch) peak(phase string) memPeak {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.peaks[phase]; p != nil {
		return *p
	}
	return memPeak{}
}

// close stops sampling.
func (w *memWatch) close() { close(w.stop) }

func (w *memWatch) run() {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.mu.Lock()
			w.sampleLocked()
			w.mu.Unlock()
		}
	}
}

// sampleLocked samples the process watched into its phase's peaks.
func (w *memWatch) sampleLocked() {
	if w.pid == 0 {
		return
	}
	m, err := loadtest.ReadProcMem(w.pid)
	if err != nil {
		return
	}
	p := w.peaks[w.phase]
	if p == nil {
		p = &memPeak{}
		w.peaks[w.phase] = p
	}
	p.RSS, p.Anon, p.File, p.HWM = max(p.RSS, m.RSS), max(p.Anon, m.Anon), max(p.File, m.File), max(p.HWM, m.HWM)
}
