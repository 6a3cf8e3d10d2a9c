package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/projector"
)

// fakeProgressOnly is a Source with a function field.
type fakeProgressOnly struct{ progress func() projector.Progress }

func (f *fakeProgressOnly) Progress() projector.Progress { return f.progress() }

// wantDeadLetteredHelp is what the dead-lettered counter must say it
// counts: this process's finds, not the dead-letter stream's copies.
const wantDeadLetteredHelp = "Invalid events found by this process since it started (not applied; passed to the dead-letter stream). " +
	"Every replica counts the same invalid events and a rebuild counts them again; the dead-letter stream holds one copy of each."

func TestProjectorCollector(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		p    projector.Progress
		want map[string]float64
	}{
		{
			name: "behind",
			p: projector.Progress{AppliedSeq: 90, StreamLastSeq: 100, TargetSeq: 95, Applied: 80, Skipped: 7,
				DeadLettered: 3, LastEventTime: now.Add(-90 * time.Second), Connected: true},
			want: map[string]float64{MetricApplied: 80, MetricSkipped: 7, MetricDeadLettered: 3, MetricAppliedSeq: 90,
				MetricStreamLastSeq: 100, MetricTargetSeq: 95, MetricLag: 10, MetricAge: 90, MetricCaughtUp: 0, MetricConnected: 1, MetricOldestAge: 0, MetricMirrorCutOff: 0, MetricMirrorLag: 0},
		},
		{
			name: "oldest unapplied event known",
			p: projector.Progress{AppliedSeq: 90, StreamLastSeq: 100, TargetSeq: 95, LastEventTime: now.Add(-90 * time.Second),
				OldestUnappliedTime: now.Add(-30 * time.Second), Connected: true},
			want: map[string]float64{MetricApplied: 0, MetricSkipped: 0, MetricDeadLettered: 0, MetricAppliedSeq: 90,
				MetricStreamLastSeq: 100, MetricTargetSeq: 95, MetricLag: 10, MetricAge: 90, MetricCaughtUp: 0, MetricConnected: 1,
				MetricOldestAge: 30, MetricMirrorCutOff: 0, MetricMirrorLag: 0},
		},
		{
			name: "nothing processed, stream not yet seen",
			p:    projector.Progress{},
			want: map[string]float64{MetricApplied: 0, MetricSkipped: 0, MetricDeadLettered: 0, MetricAppliedSeq: 0,
				MetricStreamLastSeq: 0, MetricTargetSeq: 0, MetricLag: 0, MetricAge: 0, MetricCaughtUp: 0, MetricConnected: 0, MetricOldestAge: 0, MetricMirrorCutOff: 0, MetricMirrorLag: 0},
		},
		{
			name: "a mirror cut off from its origin (another region)",
			p: projector.Progress{AppliedSeq: 50, StreamLastSeq: 50, CaughtUp: true, Connected: true,
				MirrorOf: "PERSONS", MirrorCutOffSince: now.Add(-42 * time.Second), MirrorLag: 7},
			want: map[string]float64{MetricApplied: 0, MetricSkipped: 0, MetricDeadLettered: 0, MetricAppliedSeq: 50,
				MetricStreamLastSeq: 50, MetricTargetSeq: 0, MetricLag: 0, MetricAge: 0, MetricCaughtUp: 1, MetricConnected: 1,
				MetricOldestAge: 0, MetricMirrorCutOff: 42, MetricMirrorLag: 7},
		},
		{
			name: "stream seen behind the checkpoint: no negative lag or age",
			p:    projector.Progress{AppliedSeq: 10, StreamLastSeq: 8, CaughtUp: true, LastEventTime: now.Add(time.Second)},
			want: map[string]float64{MetricApplied: 0, MetricSkipped: 0, MetricDeadLettered: 0, MetricAppliedSeq: 10,
				MetricStreamLastSeq: 8, MetricTargetSeq: 0, MetricLag: 0, MetricAge: 0, MetricCaughtUp: 1, MetricConnected: 0, MetricOldestAge: 0, MetricMirrorCutOff: 0, MetricMirrorLag: 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			src := &fakeProgressOnly{progress: func() projector.Progress { calls++; return tt.p }}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(NewProjectorCollector(src, func() time.Time { return now }))
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatalf("gather: %v", err)
			}
			got := map[string]float64{}
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					switch {
					case m.GetCounter() != nil:
						got[mf.GetName()] = m.GetCounter().GetValue()
						if !strings.HasSuffix(mf.GetName(), "_total") {
							t.Errorf("counter %s does not end in _total", mf.GetName())
						}
					case m.GetGauge() != nil:
						got[mf.GetName()] = m.GetGauge().GetValue()
					}
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("got %d metrics, want %d: %v", len(got), len(tt.want), got)
			}
			for name, want := range tt.want {
				if v, ok := got[name]; !ok || v != want {
					t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
				}
			}
			for _, mf := range mfs {
				if mf.GetName() == MetricDeadLettered && mf.GetHelp() != wantDeadLetteredHelp {
					t.Errorf("%s help = %q, want %q", MetricDeadLettered, mf.GetHelp(), wantDeadLetteredHelp)
				}
			}
			if calls != 1 {
				t.Errorf("Progress called %d times per scrape, want 1 (one consistent snapshot)", calls)
			}
		})
	}
}
