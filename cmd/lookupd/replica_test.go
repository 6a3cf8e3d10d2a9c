package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/testing/testkit"
)

// post sends a POST with an optional bearer token and returns the status
// and body.
func post(url, tok string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, nil)
	if err != nil {
		return 0, nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// metric returns the value of the sample named exactly sample (name and
// labels) on the admin listener's /metrics, "" when absent.
func metric(t *testing.T, admin, sample string) string {
	t.Helper()
	_, body, err := get("http://"+admin+"/metrics", "")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return v
		}
	}
	return ""
}

// TestSnapshotBootstrapRebuild runs serve A with a snapshot bucket, takes a
// snapshot on request, starts serve B on an empty data directory that
// bootstraps from it, and rebuilds B's model while it answers.
func TestSnapshotBootstrapRebuild(t *testing.T) {
	ns, js := personsNATS(t)
	ada := adaConsumer(t, "snap")
	publish(t, js, ada)
	for k := range 20 {
		publish(t, js, dev.DemoSigner(ada.ConsumerID, k))
	}
	adminToken := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(adminToken, []byte("s3cret-admin-token-of-32-chars!!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := func(dir string) map[string]string {
		e := serveEnv(t, ns, dir)
		e["LOOKUP_SNAPSHOT_BUCKET"] = "LOOKUP_SNAPSHOTS"
		e["LOOKUP_ADMIN_TOKEN_FILE"] = adminToken
		e["LOOKUP_AUDIT"] = "off"
		return e
	}
	a := start(t, environ(t.TempDir()), "serve")
	aAddrs := a.addrs(t)
	waitReady(t, aAddrs["admin"])

	if code, body, _ := post("http://"+aAddrs["admin"]+"/snapshot", ""); code != http.StatusUnauthorized {
		t.Errorf("POST /snapshot without the admin token: %d %s, want 401", code, body)
	}
	code, body, err := post("http://"+aAddrs["admin"]+"/snapshot", "s3cret-admin-token-of-32-chars!!")
	if err != nil || code != http.StatusOK {
		t.Fatalf("POST /snapshot: %d %s %v", code, body, err)
	}
	var snap struct {
		Snapshot string `json:"snapshot"`
		Position uint64 `json:"position"`
	}
	if err := json.Unmarshal(body, &snap); err != nil || snap.Position != 21 || snap.Snapshot == "" {
		t.Fatalf("POST /snapshot answered %s (%v), want position 21 and a name", body, err)
	}
	if got := metric(t, aAddrs["admin"], `lookup_snapshots_total{outcome="stored"}`); got != "1" {
		t.Errorf("lookup_snapshots_total stored = %q, want 1", got)
	}

	bDir := t.TempDir()
	b := start(t, environ(bDir), "serve")
	bAddrs := b.addrs(t)
	waitReady(t, bAddrs["admin"])
	if !strings.Contains(b.stderr.String(), "bootstrapped from a snapshot") {
		t.Errorf("B did not bootstrap from the snapshot:\n%s", b.stderr)
	}
	if got := metric(t, bAddrs["admin"], `lookup_snapshot_restores_total{outcome="restored"}`); got != "1" {
		t.Errorf("lookup_snapshot_restores_total restored = %q, want 1", got)
	}
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})
	signers := "http://" + bAddrs["api"] + "/api/v1/authorized-signers?consumer_id=" + ada.ConsumerID
	_, want, err := get(signers, tok)
	if err != nil {
		t.Fatal(err)
	}

	// A rebuild while the API answers: every answer is the same.
	code, body, _ = post("http://"+bAddrs["admin"]+"/rebuild", "s3cret-admin-token-of-32-chars!!")
	if code != http.StatusAccepted {
		t.Fatalf("POST /rebuild: %d %s, want 202", code, body)
	}
	testkit.WaitFor(t, 30*time.Second, func() error {
		c, got, err := get(signers, tok)
		if err != nil || c != http.StatusOK || string(got) != string(want) {
			t.Fatalf("during the rebuild: %d %s %v, want 200 %s", c, got, err, want)
		}
		if r := metric(t, bAddrs["admin"], `lookup_rebuilds_total{outcome="swapped"}`); r != "1" {
			return fmt.Errorf("rebuilds swapped %q", r)
		}
		return nil
	})
	if code, body, _ := get("http://"+bAddrs["admin"]+"/readyz", ""); code != http.StatusOK {
		t.Errorf("readyz after the rebuild: %d %s", code, body)
	}
	active, err := os.ReadFile(filepath.Join(bDir, "ACTIVE"))
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(bDir)
	var models []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "model-") {
			models = append(models, e.Name())
		}
	}
	if len(models) != 1 || models[0] != strings.TrimSpace(string(active)) {
		t.Errorf("data dir holds models %v, ACTIVE %q: want only the active one", models, active)
	}
}
