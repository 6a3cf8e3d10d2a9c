package loadtest

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

func TestParseStatPPID(t *testing.T) {
	tests := []struct {
		name, stat string
		want       int
		wantOK     bool
	}{
		{"plain", "4242 (postgres) S 17 4242 4242 0", 17, true},
		{"name with spaces and parens", "7 (a (b) c) R 1 7 7", 1, true},
		{"no name", "4242 postgres S 17", 0, false},
		{"short", "4242 (postgres) S", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStatPPID(tt.stat)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("parseStatPPID = %d, %v, want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestTreeCPUCountsChildren(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep to start: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	kids, err := childPIDs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kids, cmd.Process.Pid) {
		t.Errorf("childPIDs(self) = %v, want it to hold %d", kids, cmd.Process.Pid)
	}
	self, err := ProcessCPU(0)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := TreeCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if tree < self {
		t.Errorf("TreeCPU(self) = %v, want at least ProcessCPU(self) = %v", tree, self)
	}
}
