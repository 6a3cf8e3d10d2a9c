package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// TestScaleRunBuildsAndReuses runs the load test end to end on the real
// lookupd binary, built here, with 200 people and short runs: the first
// run builds the model, the second reuses it, a third whose stored answers
// no longer match lookupd's captures them again, and another size builds
// another model. Every row must be error-free.
func TestScaleRunBuildsAndReuses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lookupd and runs it: not with -short")
	}
	tmp := t.TempDir()
	bin, err := buildLookupd(t.Context(), tmp)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "model")
	args := func(extra ...string) []string {
		return append([]string{"--lookupd", bin, "--tool", "vegeta", "--people", "200", "--model-dir", dir,
			"--duration", "200ms", "--warmup", "0s", "--rate", "0", "--draws", "500", "--tokens", "3", "--connections", "8", "--lone-duration", "200ms"}, extra...)
	}
	runOnce := func(t *testing.T, a []string) (report, progress string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		var out, errs strings.Builder
		if err := run(ctx, a, &out, &errs); err != nil {
			t.Fatalf("run: %v\n%s", err, errs.String())
		}
		checkRows(t, out.String())
		return out.String(), errs.String()
	}

	t.Run("first run builds the model", func(t *testing.T) {
		report, progress := runOnce(t, args("--rate", "200", "--open-duration", "300ms"))
		if !strings.Contains(progress, "building the model") || !strings.Contains(report, "built in this run") {
			t.Errorf("no build said:\n%s\n%s", progress, report)
		}
		if !strings.Contains(report, "Open loop") {
			t.Errorf("no open loop in the report:\n%s", report)
		}
		checkLedgerVerdicts(t, report)
	})
	t.Run("second run reuses it", func(t *testing.T) {
		report, progress := runOnce(t, args("--ids", "zipf"))
		if !strings.Contains(progress, "reusing the model") || strings.Contains(progress, "capturing them again") ||
			!strings.Contains(report, "reused, built") || !strings.Contains(report, "Zipf-skewed") {
			t.Errorf("model not reused as is:\n%s\n%s", progress, report)
		}
	})
	t.Run("stored answers that differ are captured again", func(t *testing.T) {
		w, err := loadtest.NewBodyWriter(dir)
		if err != nil {
			t.Fatal(err)
		}
		for range 400 {
			if err := w.Append([]byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_, progress := runOnce(t, args())
		if !strings.Contains(progress, "capturing them again") {
			t.Errorf("stale answers not captured again:\n%s", progress)
		}
		if _, ok, why := loadtest.Reusable(dir, loadtest.ModelKey{Version: loadtest.ModelVersion, People: 200, Signers: 216, Five: 4, Seed: 1}); !ok {
			t.Errorf("after capturing again the model is not reusable: %s", why)
		}
	})
	t.Run("another size builds afresh", func(t *testing.T) {
		_, progress := runOnce(t, append(args(), "--people", "100"))
		if !strings.Contains(progress, "building the model") {
			t.Errorf("a model of 200 people reused for 100:\n%s", progress)
		}
		if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
			t.Errorf("no manifest after the build: %v", err)
		}
	})
}

// checkRows fails unless the report has the closed-loop rows of every
// configuration and route, each with 0 errors.
func checkRows(t *testing.T, report string) {
	t.Helper()
	rows, errCol := 0, -1
	for _, line := range strings.Split(report, "\n") {
		cells := strings.Split(line, "|")
		if strings.HasPrefix(line, "| route |") { // a table's header: where its errors are
			errCol = slices.IndexFunc(cells, func(c string) bool { return strings.TrimSpace(c) == "errors" })
			continue
		}
		if !strings.HasPrefix(line, "| GET ") {
			continue
		}
		rows++
		if errCol < 0 || errCol >= len(cells) {
			t.Fatalf("row without an errors column: %s", line)
		}
		if errs := strings.TrimSpace(cells[errCol]); errs != "0" {
			t.Errorf("row with %s errors: %s", errs, line)
		}
	}
	if want := 2 * len(serveConfs) * len(routeNames); rows < want {
		t.Errorf("report has %d rows, want at least %d:\n%s", rows, want, report)
	}
}

// checkLedgerVerdicts fails unless the ledger's messages and the lone
// requests have their verdicts, a table's row for each transport: for
// GET signers with expand, at one and at five signers, pass or fail
// (counts read, the round trip measured); for GET person, which discloses
// no protected data, no record. And unless every goal is judged over each
// transport.
func checkLedgerVerdicts(t *testing.T, report string) {
	t.Helper()
	judged, unaudited, goalRows, table := 0, 0, 0, ""
	for _, line := range strings.Split(report, "\n") {
		if strings.HasPrefix(line, "| route |") {
			table = line
			continue
		}
		verdict := strings.HasSuffix(line, "| pass |") || strings.HasSuffix(line, "| **fail** |")
		switch {
		case strings.Contains(table, "| verdict |"): // the goals
			if strings.HasPrefix(line, "| GET ") && verdict {
				goalRows++
			}
		case !strings.Contains(table, "messages an answer"): // neither the messages' table nor the lone requests'
		case (strings.HasPrefix(line, "| "+routeSigners+" |") || strings.HasPrefix(line, "| "+routeFive+" |")) && verdict:
			judged++
		case strings.HasPrefix(line, "| "+routePerson+" |") && strings.HasSuffix(line, "| "+notAudited+" |"):
			unaudited++
		}
	}
	if judged != 8 || unaudited != 4 || goalRows != 2*len(goals) {
		t.Errorf("report has %d verdicts on GET signers, %d rows of GET person without a record and %d goals judged, want 8, 4 and %d:\n%s",
			judged, unaudited, goalRows, 2*len(goals), report)
	}
}

// TestMain lets the test binary stand in for loadtest as the processes it
// starts of itself, the bare server and the broker's round trip (run
// starts os.Executable with their commands, here this binary).
func TestMain(m *testing.M) {
	if child, err := runChild(context.Background(), os.Args[1:], os.Stdin, os.Stdout); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, os.Args[1]+":", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDrawRoutes: GET person reads every person, GET signers with expand
// only people with one signer, at five signers only people with five;
// a route no person fits is left out.
func TestDrawRoutes(t *testing.T) {
	mo := modelOptions{people: 200, signers: 200, five: 4, seed: 1, ids: "uniform", draws: 2000} // 16 people without a signer
	pop, err := fixtures.NewShapedPopulation(mo.shape(), mo.seed)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for i := range pop.People() {
		byID[pop.ConsumerID(i)] = i
	}
	var progress strings.Builder
	routes, err := drawRoutes(options{model: mo}, &model{pop: pop}, t.TempDir(), &progress)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(routes); got != len(routeNames) {
		t.Fatalf("%d routes, want %d", got, len(routeNames))
	}
	for ri, r := range routes {
		if r.name != routeNames[ri] || len(r.uris) != mo.draws {
			t.Fatalf("route %d: %s with %d URIs, want %s with %d", ri, r.name, len(r.uris), routeNames[ri], mo.draws)
		}
		seen := map[int]bool{}
		for _, u := range r.uris {
			id := strings.TrimPrefix(u, "/api/v1/persons/")
			if q, ok := strings.CutPrefix(u, "/api/v1/authorized-signers?consumer_id="); ok {
				id, _, _ = strings.Cut(q, "&")
			}
			i, ok := byID[id]
			if !ok {
				t.Fatalf("%s: %s names nobody", r.name, u)
			}
			seen[i] = true
			want := map[string]int{routeSigners: 1, routeFive: fixtures.FiveSigners}
			if n, judged := want[r.name]; judged && pop.SignerCount(i) != n {
				t.Fatalf("%s: person %d has %d signers, want %d", r.name, i, pop.SignerCount(i), n)
			}
		}
		if want := map[string]int{routePerson: 200, routeSigners: 180, routeFive: 4}[r.name]; len(seen) != want {
			t.Errorf("%s: %d people read, want all %d it may read", r.name, len(seen), want)
		}
	}

	mo.signers, mo.five = 0, 0
	pop = fixtures.NewPopulation(200, 0, 1)
	progress.Reset()
	if routes, err = drawRoutes(options{model: mo}, &model{pop: pop}, t.TempDir(), &progress); err != nil {
		t.Fatal(err)
	}
	if len(routes) != 1 || routes[0].name != routePerson || !strings.Contains(progress.String(), "no "+routeFive) {
		t.Errorf("without signers: %d routes (%v), progress %q; want GET person alone", len(routes), routes, progress.String())
	}
}
