//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"
)

// refusals, the last phase of TestTwoRegions (the replicas stopped, their
// volumes kept), points region B replicas at streams that do not carry
// their model's origin, by changing what region B's PERSONS is (as the
// user admin; the replica stays the least-privileged lookupd, which reads
// only PERSONS). Each time `lookupd serve` must exit 1 saying why, before
// it serves anything. last is the checkpoint of both models.
func (x *regionsRun) refusals(ctx context.Context, t *testing.T, last uint64) {
	t.Helper()
	tests := []struct {
		name string
		// prepare makes region B's PERSONS what the replica is pointed at.
		prepare func(t *testing.T)
		volume  string // the replica's data directory
		want    []string
	}{
		{
			name: "region B's model, PERSONS a mirror of another stream",
			prepare: func(t *testing.T) {
				x.replaceMirror(ctx, t, jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"other.>"}})
				for range 3 {
					if _, err := x.r.adminB.Publish(ctx, "other.x", []byte("{}")); err != nil {
						t.Fatal(err)
					}
				}
				x.replaceMirror(ctx, t, jetstream.StreamConfig{Name: "PERSONS", Mirror: &jetstream.StreamSource{Name: "OTHER"}})
			},
			volume: x.b.cfg.volume,
			want:   []string{`found stream "OTHER" (creation time unknown) through its mirror "PERSONS"`, "another stream"},
		},
		{
			name: "an empty data directory, PERSONS a mirror of a part of the origin",
			prepare: func(t *testing.T) {
				cfg := loadStreamConfig(t, "persons.mirror.json")
				cfg.Mirror.FilterSubject = "persons.consumer.>"
				x.replaceMirror(ctx, t, cfg)
			},
			volume: "lookupd-region-b-empty-" + uuid.NewString(),
			want:   []string{`stream "PERSONS" mirrors only part of "PERSONS"`},
		},
		{
			name: "region A's model, PERSONS a mirror of the origin deleted and created again",
			prepare: func(t *testing.T) {
				x.recreateOrigin(ctx, t, last+10)
				x.replaceMirror(ctx, t, loadStreamConfig(t, "persons.mirror.json"))
				eventually(t, 60*time.Second, "the mirror of the new origin", func() error {
					m, err := x.r.mirror(ctx)
					if err != nil {
						return err
					}
					if m.State.LastSeq < last+10 {
						return fmt.Errorf("mirror at %d, want %d", m.State.LastSeq, last+10)
					}
					return nil
				})
			},
			volume: x.a.cfg.volume,
			want:   []string{fmt.Sprintf("checkpoint %d", last), "another incarnation or another origin"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.prepare(t)
			cfg := x.r.lookupdB(tc.volume, "region-b-refused", x.jwks, x.adminToken)
			start := time.Now()
			code, logs := runToExit(ctx, t, cfg, 60*time.Second)
			if code != 1 || !strings.Contains(logs, "lookupd: ") {
				t.Errorf("exit %d; want 1 with lookupd's error. Logs:\n%s", code, logs)
			}
			for _, w := range tc.want {
				if !strings.Contains(logs, w) {
					t.Errorf("the logs do not say %q:\n%s", w, logs)
				}
			}
			t.Logf("refused in %v: %s", time.Since(start).Round(time.Millisecond), lastLine(logs))
		})
	}
}

// replaceMirror deletes region B's stream cfg.Name, if any, and creates cfg.
func (x *regionsRun) replaceMirror(ctx context.Context, t *testing.T, cfg jetstream.StreamConfig) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := x.r.adminB.DeleteStream(cctx, cfg.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("region B: delete %s: %v", cfg.Name, err)
	}
	if _, err := x.r.adminB.CreateStream(cctx, cfg); err != nil {
		t.Fatalf("region B: create %s: %v", cfg.Name, err)
	}
}

// recreateOrigin deletes region A's PERSONS, creates it again from
// deploy/streams/persons.json and publishes n messages into it.
func (x *regionsRun) recreateOrigin(ctx context.Context, t *testing.T, n uint64) {
	t.Helper()
	if err := x.r.adminA.DeleteStream(ctx, "PERSONS"); err != nil {
		t.Fatalf("region A: delete PERSONS: %v", err)
	}
	createStreams(ctx, t, x.r.adminA, "persons.json")
	const window = 500
	for i := uint64(1); i <= n; i++ {
		if _, err := x.r.pubJS.PublishAsync("persons.consumer.refused", []byte("{}")); err != nil {
			t.Fatal(err)
		}
		if i%window != 0 && i != n {
			continue
		}
		select {
		case <-x.r.pubJS.PublishAsyncComplete():
		case <-time.After(30 * time.Second):
			t.Fatal("region A: publishes not acknowledged within 30s")
		}
	}
}

// runToExit runs `lookupd serve` on cfg, expecting it to stop by itself,
// and returns its exit code and logs once it has (failing the test when it
// still runs after timeout). A volume that did not exist is removed at the
// end of the test.
func runToExit(ctx context.Context, t *testing.T, cfg lookupdConfig, timeout time.Duration) (int, string) {
	t.Helper()
	if exec.Command("docker", "volume", "inspect", cfg.volume).Run() != nil {
		// Registered first, so it runs after the container is gone.
		t.Cleanup(func() { _ = exec.Command("docker", "volume", "rm", "-f", cfg.volume).Run() })
	}
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: cfg.request(), Started: true})
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		t.Fatalf("start lookupd: %v", err)
	}
	code := -1
	eventually(t, timeout, "lookupd exits", func() error {
		st, err := c.State(ctx)
		if err != nil {
			return err
		}
		if st.Running {
			return errors.New("still running")
		}
		code = st.ExitCode
		return nil
	})
	rc, err := c.Logs(ctx)
	if err != nil {
		t.Fatalf("logs: %v", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("logs: %v", err)
	}
	return code, string(b)
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
