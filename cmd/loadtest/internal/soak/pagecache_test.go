package soak

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages returns how many pages of the file at path are in the page
// cache (mincore over a mapping of it).
func residentPages(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Munmap(m) }()
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestEvictPageCache: the files under the directory, just written (so in
// the page cache), are out of it afterwards.
func TestEvictPageCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "000001.sst")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if n := residentPages(t, path); n == 0 {
		t.Skip("a file just written is not in the page cache here (a file system without one?)")
	}
	if err := EvictPageCache(dir); err != nil {
		t.Fatal(err)
	}
	if n := residentPages(t, path); n != 0 {
		t.Errorf("%d pages of the file still in the page cache, want 0", n)
	}
}
