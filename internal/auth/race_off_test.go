//go:build !race

package auth

// raceEnabled: the race detector is on (sync.Pool then drops items at
// random, so allocation counts are not meaningful).
const raceEnabled = false
