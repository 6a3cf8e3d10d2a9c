package main

import (
	"testing"

	"github.com/lookup/persons/internal/readiness"
	"github.com/lookup/persons/projector"
)

// fakeProgress is a readiness.Source with function fields.
type fakeProgress struct {
	progress func() projector.Progress
	caughtUp func() <-chan struct{}
}

func (f *fakeProgress) Progress() projector.Progress { return f.progress() }
func (f *fakeProgress) CaughtUp() <-chan struct{}    { return f.caughtUp() }

var _ readiness.Source = (*fakeProgress)(nil)

func closedChan() <-chan struct{} { c := make(chan struct{}); close(c); return c }

// TestPProfSetting: LOOKUP_PPROF is off by default, on with true, and
// refuses anything but a boolean, in serve and in audit serve.
func TestPProfSetting(t *testing.T) {
	for _, cmd := range []struct {
		name string
		in   cmdSet
	}{{"serve", inServe}, {"audit serve", inAuditServe}} {
		t.Run(cmd.name, func(t *testing.T) {
			if cfg, err := parseConfig(cmd.in, nil); err != nil || cfg.PProf {
				t.Errorf("pprof %v by default, err %v; want off", cfg.PProf, err)
			}
			if cfg, err := parseConfig(cmd.in, map[string]string{"LOOKUP_PPROF": "true"}); err != nil || !cfg.PProf {
				t.Errorf("LOOKUP_PPROF=true: pprof %v, err %v", cfg.PProf, err)
			}
			if _, err := parseConfig(cmd.in, map[string]string{"LOOKUP_PPROF": "yes please"}); err == nil {
				t.Error("LOOKUP_PPROF=yes please accepted")
			}
		})
	}
}
