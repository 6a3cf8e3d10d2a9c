package soak

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"path/filepath"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// Metrics of lookupd's /metrics that a memory sample records.
const (
	metricHeapInuse  = "go_memstats_heap_inuse_bytes"
	metricAppliedSeq = "lookup_projector_applied_sequence"
)

// MemSample is the memory of lookupd at one moment of a soak.
type MemSample struct {
	At time.Duration // since the soak started
	loadtest.ProcMem
	Heap    int64  // Go heap in use (go_memstats_heap_inuse_bytes); -1 when /metrics did not tell
	Applied uint64 // stream sequence applied to the read model (lookup_projector_applied_sequence)
	// TablesOnDisk is the size of the read model's table files (.sst under
	// the data directory), -1 when unknown: what the tables' resident pages
	// (ProcMem.Tables) can grow to.
	TablesOnDisk int64
}

// Target is the lookupd process a soak samples.
type Target struct {
	PID     int    // its process id
	Admin   string // base URL of its admin listener
	DataDir string // its data directory ("": TablesOnDisk not measured)
}

// SampleMem reads the memory of process t.PID, its Go heap and applied
// sequence from /metrics on its admin listener, and the size of the table
// files in its data directory. A failure of /metrics leaves Heap at -1 and
// Applied at 0 rather than failing, one of the data directory leaves
// TablesOnDisk at -1: the process's memory is what is measured.
func SampleMem(c *http.Client, t Target, at time.Duration) (MemSample, error) {
	m, err := loadtest.ReadProcMem(t.PID)
	if err != nil {
		return MemSample{}, err
	}
	s := MemSample{At: at, ProcMem: m, Heap: -1, TablesOnDisk: tablesOnDisk(t.DataDir)}
	v, err := loadtest.ReadMetrics(c, t.Admin, metricHeapInuse, metricAppliedSeq)
	if err != nil {
		return s, nil //nolint:nilerr // see above: the heap is optional
	}
	if h, ok := v[metricHeapInuse]; ok {
		s.Heap = int64(h)
	}
	s.Applied = uint64(v[metricAppliedSeq])
	return s, nil
}

// tablesOnDisk returns the bytes of the .sst files under dir (Badger's
// tables, of the active model and of any other), -1 when dir is "" or
// cannot be read.
func tablesOnDisk(dir string) int64 {
	if dir == "" {
		return -1
	}
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil // removed by a compaction meanwhile
			}
			return err
		}
		if d.Type().IsRegular() && filepath.Ext(path) == ".sst" {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	if err != nil {
		return -1
	}
	return n
}

// SampleEvery calls SampleMem at once and then every interval until ctx
// ends, and returns the samples, At counted from the call. A failed
// sample is skipped (the process may be exiting).
func SampleEvery(ctx context.Context, c *http.Client, t Target, interval time.Duration) []MemSample {
	start := time.Now()
	var out []MemSample
	take := func(now time.Time) {
		if s, err := SampleMem(c, t, now.Sub(start).Round(time.Second)); err == nil {
			out = append(out, s)
		}
	}
	take(start)
	every(ctx, interval, take)
	return out
}
