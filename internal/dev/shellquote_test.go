package dev

import (
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
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
		got, err := testkit.ShellSplit(line)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[1] != s {
			t.Errorf("Quote(%q) = %s, splits into %q", s, ShellQuote(s), got)
		}
	}
}
