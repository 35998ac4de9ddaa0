//go:build race

package script

// A race-detector build (tests only) runs its children instrumented too: shadow memory on top
// of their data segment, and several times the time.
const (
	raceMemory   = 2 << 30
	raceSlowdown = 10
)
