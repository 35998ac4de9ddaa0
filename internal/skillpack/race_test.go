//go:build race

package skillpack_test

// slowdown is how much slower code runs under the race detector, for time bounds in tests.
const slowdown = 10
