//go:build !race

package document

const (
	raceMemory   = 0
	raceSlowdown = 1
)
