package pgyardstick

import (
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

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
	self, err := loadtest.ProcessCPU(0)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := TreeCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if tree < self {
		t.Errorf("TreeCPU(self) = %v, want at least loadtest.ProcessCPU(self) = %v", tree, self)
	}
}
