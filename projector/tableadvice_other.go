//go:build !linux

package projector

// adviseTables does nothing on this system (see the Linux version): it
// returns a function that does nothing either.
func adviseTables(string) func() { return func() {} }
