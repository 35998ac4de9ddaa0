//go:build !race

package script

const (
	raceMemory   = 0
	raceSlowdown = 1
)
