// Shell quoting: it writes the POSIX shell command lines that "lookupd
// dev" prints: words left plain when they hold only characters safe
// unquoted, single-quoted otherwise. Tests and the load tool read such a
// line back with testkit.ShellSplit, its inverse.

package dev

import "strings"

// ShellQuote quotes s for a POSIX shell when it holds anything but characters
// that are safe unquoted.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=@+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
