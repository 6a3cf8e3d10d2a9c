package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// profiler captures a CPU profile of lookupd serve (net/http/pprof on its
// admin listener, --pprof) while each of its closed-loop runs is measured,
// into a file per scenario under dir (--profile). Profiling costs the
// server a little CPU, so a run with --profile is for finding where the
// time goes, not for the figures.
type profiler struct {
	dir string
}

// serveFlags are the flags lookupd serve needs to be profiled.
func (p *profiler) serveFlags() []string {
	if p == nil {
		return nil
	}
	return []string{"--pprof", "true"}
}

// during runs measure while a CPU profile of the server whose admin
// listener is admin is taken for d (less the last second, so that the
// profile ends before the run does), and writes it to the scenario's file.
// A failed profile is reported to progress; it fails nothing.
func (p *profiler) during(ctx context.Context, admin, scenario string, d time.Duration, progress io.Writer, measure func() error) error {
	if p == nil || admin == "" {
		return measure()
	}
	secs := max(1, int((d-time.Second)/time.Second))
	done := make(chan error, 1)
	path := filepath.Join(p.dir, profileName(scenario))
	go func() { done <- fetchProfile(ctx, admin, secs, path) }()
	err := measure()
	if perr := <-done; perr != nil {
		fmt.Fprintf(progress, "no CPU profile of %s: %v\n", scenario, perr)
	} else {
		fmt.Fprintf(progress, "CPU profile of %s: %s\n", scenario, path)
	}
	return err
}

// fetchProfile writes the CPU profile of secs seconds from admin's
// /debug/pprof/profile to path.
func fetchProfile(ctx context.Context, admin string, secs int, path string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs+30)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", admin, secs), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /debug/pprof/profile: %s", resp.Status)
	}
	f, err := os.Create(path) //nolint:gosec // G304: a file in the directory the operator named
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// profileName is a file name for a scenario's profile: its name with every
// run of characters other than letters and digits made one dash.
func profileName(scenario string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(scenario) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-") + ".pprof"
}
