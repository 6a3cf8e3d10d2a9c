package loadtest

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// smaps is the shape of /proc/<pid>/smaps: a header per mapping, then its
// attributes.
const smaps = `00400000-00a00000 r-xp 00000000 fd:00 123    /usr/local/bin/lookupd
Size:               6144 kB
Rss:                4096 kB
VmFlags: rd ex mr mw me
7f0000000000-7f0004000000 r--s 00000000 fd:00 456    /tmp/soak/store/000012.sst
Size:              65536 kB
Rss:               30000 kB
7f0004000000-7f0008000000 r--s 00000000 fd:00 457    /tmp/soak/store/000013.sst
Rss:               10000 kB
7f0008000000-7f000a000000 rw-s 00000000 fd:00 458    /tmp/soak/store/00005.mem
Rss:                8000 kB
7f000a000000-7f000c000000 rw-s 00000000 fd:00 459    /tmp/soak/store/000001.vlog
Rss:                 100 kB
7f000c000000-7f000d000000 r--s 00000000 fd:00 460    /tmp/soak/store/000009.sst (deleted)
Rss:                 500 kB
c000000000-c004000000 rw-p 00000000 00:00 0
Rss:               90000 kB
55d000000000-55d000100000 rw-p 00000000 00:00 0      [heap]
Rss:                 200 kB
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0      [stack]
Rss:                 132 kB
`

func TestParseSmaps(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]int64
	}{
		{name: "by kind", in: smaps, want: map[string]int64{
			"": 4096 << 10, ".sst": (30000 + 10000 + 500) << 10, ".mem": 8000 << 10, ".vlog": 100 << 10}},
		{name: "anonymous only", in: "c000000000-c004000000 rw-p 00000000 00:00 0\nRss:  9 kB\n", want: map[string]int64{}},
		{name: "empty", in: "", want: map[string]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSmaps(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseSmaps = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReadProcMemSelf reads this test process: on Linux, it has a
// resident set with anonymous pages and a mapped executable.
func TestReadProcMemSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	m, err := ReadProcMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.Anon <= 0 || m.HWM < m.RSS || m.OtherFiles <= 0 {
		t.Errorf("ReadProcMem(self) = %+v, want RSS, anon, HWM >= RSS and a mapped executable", m)
	}
}
