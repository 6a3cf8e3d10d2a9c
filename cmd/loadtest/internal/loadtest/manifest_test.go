package loadtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestManifestReuse(t *testing.T) {
	key := ModelKey{Version: ModelVersion, People: 200, Signers: 200, Five: 4, Seed: 1}
	complete := Manifest{ModelKey: key, Stream: "PERSONS", LastSeq: 400, Bodies: 400, Built: time.Now().UTC(), BuildTime: time.Minute}
	tests := []struct {
		name    string
		write   *Manifest // nil: none written
		remove  bool      // RemoveManifest after writing
		want    bool
		wantWhy string
	}{
		{name: "no model", want: false},
		{name: "complete and matching", write: &complete, want: true},
		{name: "build cut short: manifest removed", write: &complete, remove: true, want: false},
		{name: "other people", write: withKey(complete, func(k *ModelKey) { k.People = 300 }), wantWhy: "want"},
		{name: "other signers", write: withKey(complete, func(k *ModelKey) { k.Signers = 0 }), wantWhy: "want"},
		{name: "other five-signer people", write: withKey(complete, func(k *ModelKey) { k.Five = 0 }), wantWhy: "want"},
		{name: "other seed", write: withKey(complete, func(k *ModelKey) { k.Seed = 2 }), wantWhy: "want"},
		{name: "older tool", write: withKey(complete, func(k *ModelKey) { k.Version = ModelVersion - 1 }), wantWhy: "want"},
		{name: "bodies missing", write: func() *Manifest { m := complete; m.Bodies = 399; return &m }(), wantWhy: "399 bodies"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.write != nil {
				if err := WriteManifest(dir, *tt.write); err != nil {
					t.Fatal(err)
				}
			}
			if tt.remove {
				if err := RemoveManifest(dir); err != nil {
					t.Fatal(err)
				}
			}
			m, ok, why := Reusable(dir, key)
			if ok != tt.want || !strings.Contains(why, tt.wantWhy) {
				t.Fatalf("Reusable = %v, %q; want %v, %q", ok, why, tt.want, tt.wantWhy)
			}
			if ok && (m.LastSeq != complete.LastSeq || !m.Built.Equal(complete.Built) || m.BuildTime != time.Minute) {
				t.Errorf("manifest read back %+v, want %+v", m, complete)
			}
			if _, err := os.Stat(filepath.Join(dir, manifestFile+".tmp")); err == nil {
				t.Error("a temporary manifest was left behind")
			}
		})
	}
}

func withKey(m Manifest, change func(*ModelKey)) *Manifest {
	change(&m.ModelKey)
	return &m
}

func TestManifestUnreadable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, manifestFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, why := Reusable(dir, ModelKey{}); ok || why == "" {
		t.Errorf("Reusable of a torn manifest = %v, %q; want false with a reason", ok, why)
	}
}

func TestDefaultModelDir(t *testing.T) {
	got := DefaultModelDir(ModelKey{People: 1000000, Signers: 1000000, Five: 20000, Seed: 1})
	if want := filepath.Join("lookupd-loadtest", "model-1000000-1000000-five20000-1"); !strings.HasSuffix(got, want) {
		t.Errorf("DefaultModelDir = %q, want it to end in %q", got, want)
	}
}

// TestManifestOfOneSignerEach: a manifest written before the five-signer
// people (no five_signers) is a model of one signer a person, not reused
// for a model with five-signer people.
func TestManifestOfOneSignerEach(t *testing.T) {
	dir := t.TempDir()
	old := `{"version": 1, "people": 200, "signers": 200, "seed": 1, "stream": "PERSONS", "last_seq": 400, "bodies": 400}`
	if err := os.WriteFile(filepath.Join(dir, manifestFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, why := Reusable(dir, ModelKey{Version: ModelVersion, People: 200, Signers: 200, Five: 4, Seed: 1}); ok || !strings.Contains(why, "want") {
		t.Errorf("an old model reused for five-signer people: %v, %q", ok, why)
	}
	if _, ok, why := Reusable(dir, ModelKey{Version: ModelVersion, People: 200, Signers: 200, Seed: 1}); !ok {
		t.Errorf("an old model not reused for its own shape: %s", why)
	}
}
