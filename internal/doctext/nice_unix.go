//go:build unix

package doctext

import "syscall"

// childNice is the scheduling priority a reading child lowers itself to: the server's own
// requests come first when the readings and the server want the same cores.
const childNice = 10

// lowerPriority lowers this (child) process's priority to childNice; best effort.
func lowerPriority() { _ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, childNice) }
