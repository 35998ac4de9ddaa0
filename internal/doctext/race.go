//go:build race

package doctext

// A race-detector build (tests only) runs its reading children instrumented too: they get the
// detector's shadow memory on top of their data segment, and several times the time.
const (
	raceMemory   = 2 << 30
	raceSlowdown = 10
)
