package loadtest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// RemoveKept removes dir, which the tool keeps a what in between runs (set
// by flag), unless it holds a file that owns says is not a what's: a
// directory given by mistake is left alone. A missing dir is no error.
func RemoveKept(dir string, owns func(name string) bool, what, flag string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !owns(e.Name()) {
			return fmt.Errorf("%s holds %s, which no %s does: not removing it (give another %s)", dir, e.Name(), what, flag)
		}
	}
	return os.RemoveAll(dir)
}

// DiskUsage returns the bytes the files under dir take on disk (their
// blocks: Badger's value log files are sparse), 0 when unknown.
func DiskUsage(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil //nolint:nilerr // an unreadable file counts as nothing
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			} else {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
