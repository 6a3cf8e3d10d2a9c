package dev

import (
	"strings"
	"testing"
)

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"plain", "https://dev.example/a?b=c", "it's", "a b", "", "x'y'z", "$HOME"} {
		line := "cmd " + ShellQuote(s)
		if s == "$HOME" && !strings.Contains(line, "'$HOME'") {
			t.Errorf("Quote(%q) = %s, want it quoted", s, ShellQuote(s))
			continue
		}
		if strings.ContainsAny(s, "$") {
			continue // Split refuses $ outside quotes only; checked above
		}
		got, err := ShellSplit(line)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[1] != s {
			t.Errorf("Quote(%q) = %s, splits into %q", s, ShellQuote(s), got)
		}
	}
}

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
