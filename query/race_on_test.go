//go:build race

package query

// raceEnabled: the race detector is on (sync.Pool then drops items at
// random, so allocation counts are not meaningful).
const raceEnabled = true
