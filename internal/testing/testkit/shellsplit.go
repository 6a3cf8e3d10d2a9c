// Shell words: it splits a POSIX shell command line into its words, for
// the lines "lookupd dev" prints (its banner) and the load tool's flags
// that pass flags on to lookupd.

package testkit

import (
	"fmt"
	"strings"
)

// ShellSplit splits line into words as a POSIX shell would, for lines of plain
// and single-quoted words with backslash escapes outside the quotes (what
// dev.ShellQuote writes), separated by spaces or tabs. It refuses, with an error, a
// quote or escape left open and a double quote, $ or backquote outside
// single quotes: a shell would expand or split those otherwise.
func ShellSplit(line string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quoted  bool
		escaped bool
	)
	for _, r := range line {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == '\\':
			escaped, inWord = true, true
		case r == '"' || r == '$' || r == '`':
			return nil, fmt.Errorf("unexpected shell character %q in %q", r, line)
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted || escaped {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
