package replica

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The data directory of a replica (LOOKUP_DATA_DIR) holds its active read
// model either in itself (a model never restored nor rebuilt) or in a
// subdirectory that the file ACTIVE names:
//
//	<data dir>/ACTIVE           "model-<unix nanos>", written atomically
//	<data dir>/model-<nanos>/   a read model restored from a snapshot or rebuilt
//
//	<data dir>/compaction.json  the last compaction of the active model (see below)
//
// A restore, a rebuild or a compaction writes a new model directory beside
// the active one and makes it active by rewriting ACTIVE (the commit
// point); the model it replaces is deleted afterwards. A crash before the
// commit leaves the new directory unnamed, one after it the old model
// unnamed: either is removed at the next start (removeInactive), so every
// restart converges on the model ACTIVE names.
//
// compaction.json, {"position":<sequence>,"at":<RFC 3339 time>}, is written
// (atomically) only once a compacted model is active and the model it
// replaced deleted, and removed before any other model (restored or
// rebuilt) is made active: what it says is always true of the active
// model's files (CompactionInfo).
const (
	activeFile     = "ACTIVE"
	compactionFile = "compaction.json"
	modelPrefix    = "model-"
	// downloadSuffix names the file a snapshot's restore downloads to,
	// beside its model directory (projector/restore.go, which names it
	// the same).
	downloadSuffix = ".download"
)

// badgerFile reports whether name is a file of a Badger store in its
// directory (the model of a data directory without ACTIVE).
func badgerFile(name string) bool {
	switch name {
	case "MANIFEST", "KEYREGISTRY", "DISCARD", "LOCK":
		return true
	}
	for _, ext := range []string{".sst", ".vlog", ".mem"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// ActiveDir returns the directory of the active read model of the data
// directory root: the one ACTIVE names, else root itself.
func ActiveDir(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, activeFile)) //nolint:gosec // G304: root is the operator's data directory
	if errors.Is(err, fs.ErrNotExist) {
		return root, nil
	}
	if err != nil {
		return "", fmt.Errorf("data dir %s: %w", root, err)
	}
	name := strings.TrimSpace(string(b))
	if !strings.HasPrefix(name, modelPrefix) || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("data dir %s: %s names %q, not a model directory", root, activeFile, name)
	}
	return filepath.Join(root, name), nil
}

// newModelDir creates an empty model directory in root, beside the
// active model, and returns it. It is not active until activate.
func newModelDir(root string) (string, error) {
	dir := filepath.Join(root, modelPrefix+strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", fmt.Errorf("data dir %s: %w", root, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("new model directory: %w", err)
	}
	return dir, nil
}

// activate makes dir, a model directory of root, the active model: ACTIVE
// is written to a temporary file, synced, renamed over the old one and the
// directory synced, so that after a crash it names either model, whole.
func activate(root, dir string) error {
	if filepath.Dir(dir) != filepath.Clean(root) || !strings.HasPrefix(filepath.Base(dir), modelPrefix) {
		return fmt.Errorf("activate %s: not a model directory of %s", dir, root)
	}
	tmp := filepath.Join(root, activeFile+".tmp")
	if err := writeSynced(tmp, []byte(filepath.Base(dir)+"\n")); err != nil {
		return fmt.Errorf("activate %s: %w", dir, err)
	}
	if err := os.Rename(tmp, filepath.Join(root, activeFile)); err != nil {
		return fmt.Errorf("activate %s: %w", dir, err)
	}
	return syncDir(root)
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600) //nolint:gosec // G304: in the data directory
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // G304: the data directory
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// removeModel deletes the read model in dir once it is no longer active:
// the directory when it is a model directory of root, else (dir is root
// itself) the Badger files in root.
func removeModel(root, dir string) error {
	if filepath.Clean(dir) != filepath.Clean(root) {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove read model %s: %w", dir, err)
		}
		return nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("remove read model %s: %w", root, err)
	}
	for _, e := range entries {
		if !e.IsDir() && badgerFile(e.Name()) {
			if err := os.Remove(filepath.Join(root, e.Name())); err != nil {
				return fmt.Errorf("remove read model %s: %w", root, err)
			}
		}
	}
	return nil
}

// removeInactive deletes what a crash may have left in root beside the
// active model: model directories that are not active (a restore or
// rebuild that did not finish, or a replaced model not yet deleted), and
// the Badger files in root itself when a model directory is active.
func removeInactive(root string, logger *slog.Logger) error {
	active, err := ActiveDir(root)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("data dir %s: %w", root, err)
	}
	for _, e := range entries {
		path := filepath.Join(root, e.Name())
		if !e.IsDir() && strings.HasPrefix(e.Name(), modelPrefix) && strings.HasSuffix(e.Name(), downloadSuffix) {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("data dir %s: %w", root, err)
			}
			continue
		}
		if e.IsDir() && strings.HasPrefix(e.Name(), modelPrefix) && path != active {
			logger.Info("removing a read model that is not active (left by an unfinished restore, rebuild or swap)", "dir", path)
			if err := removeModel(root, path); err != nil {
				return err
			}
		}
	}
	if active != root {
		return removeModel(root, root)
	}
	return nil
}

// compactionRecord is compaction.json.
type compactionRecord struct {
	Position uint64    `json:"position"`
	At       time.Time `json:"at"`
}

// writeCompaction records info as the last compaction of root's active
// model: written to a temporary file, synced, renamed and the directory
// synced, like ACTIVE.
func writeCompaction(root string, info CompactionInfo) error {
	b, err := json.Marshal(compactionRecord{Position: info.Position, At: info.At.UTC()})
	if err != nil {
		return err
	}
	tmp := filepath.Join(root, compactionFile+".tmp")
	if err := writeSynced(tmp, append(b, '\n')); err != nil {
		return fmt.Errorf("record the compaction: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(root, compactionFile)); err != nil {
		return fmt.Errorf("record the compaction: %w", err)
	}
	return syncDir(root)
}

// readCompaction returns the last compaction of root's active model, the
// zero value if none is recorded.
func readCompaction(root string) (CompactionInfo, error) {
	b, err := os.ReadFile(filepath.Join(root, compactionFile)) //nolint:gosec // G304: in the data directory
	if errors.Is(err, fs.ErrNotExist) {
		return CompactionInfo{}, nil
	}
	if err != nil {
		return CompactionInfo{}, fmt.Errorf("data dir %s: %w", root, err)
	}
	var rec compactionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return CompactionInfo{}, fmt.Errorf("data dir %s: %s: %w", root, compactionFile, err)
	}
	return CompactionInfo(rec), nil
}

// forgetCompaction removes root's compaction record, before a model that
// was not compacted is made active.
func forgetCompaction(root string) error {
	err := os.Remove(filepath.Join(root, compactionFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("forget the compaction record: %w", err)
	}
	return syncDir(root)
}
