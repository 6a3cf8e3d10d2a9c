// Package crash writes out what a dying process would otherwise lose. A
// panic in a goroutine other than main's ends the process at once, without
// running the deferred calls of any other goroutine: the log buffer of a
// long-running command would lose its last lines, the very ones that say
// what went wrong. Each goroutine the service starts defers Guard, which
// runs the functions registered with OnPanic (the log buffer's flush)
// before the panic goes on.
//
// A panic is still a bug and still ends the process, with its own value
// and stack trace: Guard never swallows one.
package crash

import "sync"

var (
	mu       sync.Mutex
	nextID   int
	flushers = map[int]func(){}
)

// OnPanic registers f to be called by Guard when a guarded goroutine
// panics, before the panic goes on. f must not block for long and must not
// panic. The returned function unregisters f.
func OnPanic(f func()) (remove func()) {
	mu.Lock()
	defer mu.Unlock()
	id := nextID
	nextID++
	flushers[id] = f
	return func() {
		mu.Lock()
		defer mu.Unlock()
		delete(flushers, id)
	}
}

// Guard, deferred first in a goroutine (defer crash.Guard()), calls the
// functions registered with OnPanic when the goroutine panics, then panics
// again with the same value (Go prints it as "[recovered, repanicked]",
// with the original stack). It does nothing when the goroutine returns.
func Guard() {
	if p := recover(); p != nil {
		Flush()
		panic(p)
	}
}

// Flush calls the functions registered with OnPanic.
func Flush() {
	mu.Lock()
	fs := make([]func(), 0, len(flushers))
	for _, f := range flushers {
		fs = append(fs, f)
	}
	mu.Unlock()
	for _, f := range fs {
		f()
	}
}
