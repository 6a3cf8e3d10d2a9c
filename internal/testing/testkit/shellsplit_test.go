package testkit

import (
	"strings"
	"testing"
)

// TestSplitRefuses: what a shell would expand or leave open is an error.
func TestSplitRefuses(t *testing.T) {
	for _, line := range []string{`cmd "a b"`, "cmd $HOME", "cmd `id`", "cmd 'open", `cmd a\`} {
		if words, err := ShellSplit(line); err == nil {
			t.Errorf("Split(%q) = %q, want an error", line, words)
		}
	}
}

// TestSplitTabsAndEscapes: tabs separate words; a backslash escapes one
// character outside quotes.
func TestSplitTabsAndEscapes(t *testing.T) {
	got, err := ShellSplit("  a\tb\\ c\\'d  'e f'")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b c'd", "e f"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Split = %q, want %q", got, want)
	}
}
