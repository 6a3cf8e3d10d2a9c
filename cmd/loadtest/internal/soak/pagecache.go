package soak

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// EvictPageCache drops the pages of every regular file under dir from the
// page cache: each is written out (fsync) and then advised away
// (POSIX_FADV_DONTNEED), which the kernel honours for clean pages no
// process maps. A soak calls it between two runs of lookupd on the same
// read model, with no lookupd running: each run then reads its tables from
// disk, as a fresh container does, and the pages it reads are charged to
// its own cgroup, not found already charged to another's.
func EvictPageCache(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0) //nolint:gosec // G304: a file of the soak's read model
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil { //nolint:gosec // G115: a file descriptor
			return fmt.Errorf("evict %s from the page cache: %w", path, err)
		}
		return nil
	})
}
