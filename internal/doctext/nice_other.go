//go:build !unix

package doctext

// lowerPriority: no portable way here; the child keeps its priority.
func lowerPriority() {}
