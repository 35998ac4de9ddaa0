//go:build !race

package doctext

const (
	raceMemory   = 0
	raceSlowdown = 1
)
