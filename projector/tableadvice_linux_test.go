package projector

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tableFlags returns the VmFlags of each mapping of a .sst file under dir
// in /proc/self/smaps.
func tableFlags(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	table := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case len(fields) > 0 && !strings.HasSuffix(fields[0], ":"):
			table = len(fields) >= 6 && strings.HasPrefix(fields[5], dir) && strings.HasSuffix(fields[5], ".sst")
		case table && strings.HasPrefix(line, "VmFlags:"):
			out = append(out, line)
		}
	}
	return out
}

// TestAdviseTables: the mappings of a store's tables are advised read at
// random (VmFlags "rr" in smaps) soon after it opens.
func TestAdviseTables(t *testing.T) {
	dir, err := filepath.Abs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir, StoreOptions{})
	applyAll(t, s, consumerEv(newID(), 1, "Ann"))
	if err := s.Close(); err != nil { // the memtable becomes a table
		t.Fatal(err)
	}
	openStore(t, dir, StoreOptions{}) // closed by the test's cleanup
	deadline := time.Now().Add(10 * time.Second)
	for {
		flags := tableFlags(t, dir)
		advised := len(flags) > 0
		for _, f := range flags {
			advised = advised && strings.Contains(f+" ", " rr ")
		}
		if advised {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("table mappings' flags after 10s: %q, want each with rr", flags)
		}
		time.Sleep(50 * time.Millisecond) // polled: the advice is every tableAdviceEvery
	}
}

// TestTableMapping parses lines of /proc/self/maps.
func TestTableMapping(t *testing.T) {
	tests := []struct {
		name, line string
		ok         bool
	}{
		{"table", "7f00a0000000-7f00a4000000 r--s 00000000 fe:00 1234 /data/m1/000001.sst", true},
		{"other store", "7f00a0000000-7f00a4000000 r--s 00000000 fe:00 1234 /other/000001.sst", false},
		{"memtable", "7f00a0000000-7f00a4000000 rw-s 00000000 fe:00 1234 /data/m1/00001.mem", false},
		{"anonymous", "7f00a0000000-7f00a4000000 rw-p 00000000 00:00 0", false},
		{"bad range", "zz-7f00a4000000 r--s 00000000 fe:00 1234 /data/m1/000001.sst", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, end, id, ok := tableMapping(tt.line, "/data/m1/")
			if ok != tt.ok {
				t.Fatalf("tableMapping ok = %v, want %v", ok, tt.ok)
			}
			if ok && (start != 0x7f00a0000000 || end != 0x7f00a4000000 || id != "7f00a0000000-7f00a4000000 1234") {
				t.Errorf("tableMapping = %x, %x, %q", start, end, id)
			}
		})
	}
}
