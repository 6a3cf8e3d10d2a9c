package loadtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// ModelVersion is the version of the model directory's layout and of how
// the tool fills it (the population's events, the body store's records):
// a model of another version is rebuilt. Bump it with any such change.
const ModelVersion = 1

// The parts of a model directory, besides the body store and manifest.
const (
	ModelNATSDir    = "nats"    // the broker's store (internal/dev)
	ModelLookupdDir = "lookupd" // the data directory of lookupd serve
	manifestFile    = "manifest.json"
)

// ModelKey says which model a directory must hold to be reused.
type ModelKey struct {
	Version int `json:"version"` // ModelVersion
	People  int `json:"people"`
	Signers int `json:"signers"`
	// Five is how many consumers have five signers each (fixtures'
	// Shape.Five); a manifest of before it was kept reads 0.
	Five int    `json:"five_signers"`
	Seed uint64 `json:"seed"`
}

// Manifest describes a complete model: it is written last, so a model
// without one (a build cut short) is never reused. The body store holds
// two records a person: record 2i is person i's GET person answer, record
// 2i+1 its GET signers with expand answer.
type Manifest struct {
	ModelKey
	Stream  string `json:"stream"`   // the source stream
	LastSeq uint64 `json:"last_seq"` // its sequence after the last creation event
	Lookupd string `json:"lookupd"`  // "lookupd version" of the binary the bodies were captured from
	Bodies  int    `json:"bodies"`   // records in the body store
	// PersonHeader and SignersHeader are the headers of one captured
	// answer of each route (less Date and Content-Length), which the bare
	// server sends with every answer of that route.
	PersonHeader  http.Header   `json:"person_header"`
	SignersHeader http.Header   `json:"signers_header"`
	Built         time.Time     `json:"built"`
	BuildTime     time.Duration `json:"build_time_ns"` // how long the build took
}

// IsModelFile reports whether name is the name of an entry of a model
// directory.
func IsModelFile(name string) bool {
	switch name {
	case ModelNATSDir, ModelLookupdDir, manifestFile, manifestFile + ".tmp",
		bodyData, bodyIndex, bodyIndex + ".tmp", bodyKey:
		return true
	}
	return false
}

// ReadManifest returns the manifest of the model in dir; ok is false when
// there is none (no model, or a build cut short).
func ReadManifest(dir string) (m Manifest, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestFile)) //nolint:gosec // G304: the model directory
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, false, nil
	}
	if err != nil {
		return Manifest{}, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, false, fmt.Errorf("%s: %w", filepath.Join(dir, manifestFile), err)
	}
	return m, true, nil
}

// Reusable returns the manifest of the model in dir and true when it is a
// complete model of key, else why not ("" when there is no model at all).
func Reusable(dir string, key ModelKey) (Manifest, bool, string) {
	m, ok, err := ReadManifest(dir)
	switch {
	case err != nil:
		return m, false, err.Error()
	case !ok:
		return m, false, ""
	case m.ModelKey != key:
		return m, false, fmt.Sprintf("the model is %+v, want %+v", m.ModelKey, key)
	case m.Bodies != 2*key.People:
		return m, false, fmt.Sprintf("%d bodies, want %d", m.Bodies, 2*key.People)
	}
	return m, true, ""
}

// WriteManifest writes m into dir atomically (a temporary file synced,
// then renamed): the last step of a build.
func WriteManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileSync(filepath.Join(dir, manifestFile), append(b, '\n'))
}

// RemoveManifest removes the manifest of dir, first step of any change to
// a model: until a new one is written the model is not reused.
func RemoveManifest(dir string) error {
	if err := os.Remove(filepath.Join(dir, manifestFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// DefaultModelDir returns where the model of key is kept by default: under
// the user's cache directory (os.UserCacheDir), else the temporary one, in
// a directory named after its shape and seed.
func DefaultModelDir(key ModelKey) string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "lookupd-loadtest", fmt.Sprintf("model-%d-%d-five%d-%d", key.People, key.Signers, key.Five, key.Seed))
}
