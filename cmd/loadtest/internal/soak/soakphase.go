package soak

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// cgroupInterval is how often a soak reads its cgroup's accounting (the
// peak of the anonymous memory is of these samples).
const cgroupInterval = time.Second

// soakPhaseRun is one run of lookupd serve in a soak: in a memory cgroup
// of Limit bytes (0: none), from its start on the read model to its stop.
type soakPhaseRun struct {
	Limit  int64
	Budget string        // what lookupd logged of its memory budget
	Ready  time.Duration // from listening to having applied the stream
	Run    soakRun
	Cgroup CgroupWatch // over the load
	// End is the cgroup's accounting once lookupd has stopped: its OOM
	// kills counted to the end.
	End  CgroupStat
	Died string // how lookupd ended before it was stopped; "" when it did not
}

// phase returns what the soak's criteria judge of r.
func (r soakPhaseRun) phase() SoakPhase {
	return SoakPhase{Limit: r.Limit, OOMKills: r.End.OOMKills, AnonPeak: r.Cgroup.PeakAnon,
		Refaults: r.Cgroup.Refaults(), LimitHits: r.End.LimitHits, P99: r.Run.Lookups.P99,
		Errors: r.Run.Lookups.Errors, Died: r.Died != ""}
}

// name is how the report calls r.
func (r soakPhaseRun) name() string {
	if r.Limit == 0 {
		return "no limit"
	}
	return loadtest.MiBs(r.Limit) + " MiB limit"
}

// runSoakPhase drops the read model's pages from the page cache, starts
// lookupd serve inside a new memory cgroup of limit bytes (0: none), waits
// until it has applied the whole stream, runs the soak's load on it while
// the cgroup's accounting is read every cgroupInterval, then stops it and
// removes the cgroup. A lookupd that dies (the OOM killer) is recorded,
// not an error.
func runSoakPhase(ctx context.Context, o Options, env soakEnv, limit int64, progress io.Writer) (r soakPhaseRun, err error) {
	r.Limit = limit
	fmt.Fprintf(progress, "soak run: %s\n", r.name())
	if err := EvictPageCache(env.storeDir()); err != nil {
		return r, err
	}
	cg, err := NewCgroup(fmt.Sprintf("lookupd-soak-%d-%d", os.Getpid(), limit), limit)
	if err != nil {
		return r, err
	}
	defer func() {
		if rerr := cg.Remove(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	srv, err := startSoakServe(ctx, o, env, cg)
	if err != nil {
		return r, err
	}
	r.Budget = memoryBudgetLine(srv.Logs())
	r.Ready, err = soakPhaseLoad(ctx, o, env, srv, cg, &r, progress)
	if died, how := srv.Exited(); died {
		r.Died = fmt.Sprint(how)
	}
	if serr := srv.Stop(); serr != nil && r.Died == "" && err == nil {
		err = fmt.Errorf("lookupd serve: %w; its log ends:\n%s", serr, srv.Logs())
	}
	if r.End, err = cg.Stat(); err != nil {
		return r, err
	}
	if r.Died != "" {
		fmt.Fprintf(progress, "lookupd serve died (%s, %d OOM kills); its log ends:\n%s\n", r.Died, r.End.OOMKills, lastLines(srv.Logs(), 10))
		return r, nil
	}
	return r, err
}

// soakPhaseLoad waits until srv has applied the stream, then runs the load
// while watching cg, into r; it returns how long the wait took. A srv
// that died is no error.
func soakPhaseLoad(ctx context.Context, o Options, env soakEnv, srv *loadtest.Dev, cg *Cgroup, r *soakPhaseRun,
	progress io.Writer) (time.Duration, error) {
	s, err := env.js.Stream(ctx, loadtest.Stream)
	if err != nil {
		return 0, err
	}
	ready, err := loadtest.WaitCaughtUp(ctx, env.client, srv.Admin, s.CachedInfo().State.LastSeq, progress)
	if err != nil {
		if died, _ := srv.Exited(); died {
			return ready, nil
		}
		return ready, fmt.Errorf("%w; its log ends:\n%s", err, srv.Logs())
	}
	target := Target{PID: srv.PID(), Admin: srv.Admin, DataDir: env.storeDir()}
	wctx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.Cgroup = WatchCgroup(wctx, cg, cgroupInterval) })
	r.Run, err = soak(ctx, o, env, srv, target, progress)
	stopWatch()
	wg.Wait()
	return ready, err
}

// memoryBudgetLine returns what lookupd's JSON log says of its memory
// budget (the line "memory budget"): the budget, where it came from and
// the soft limit; "" when the log has no such line.
func memoryBudgetLine(logs string) string {
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var l struct {
			Msg    string `json:"msg"`
			Budget int64  `json:"memory_budget"`
			From   string `json:"from"`
			Soft   int64  `json:"go_memory_limit"`
			SoftOf string `json:"go_memory_limit_from"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Msg != "memory budget" {
			continue
		}
		return fmt.Sprintf("budget %s MiB (%s), Go soft limit %s MiB (%s)", loadtest.MiBs(l.Budget), l.From, loadtest.MiBs(l.Soft), l.SoftOf)
	}
	return ""
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
