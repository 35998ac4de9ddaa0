//go:build !unix

package doctext

import "os"

// limitSelf cannot bound a process on this system: the child's deadline still holds.
func limitSelf(memory, cpu int64) error { return nil }

func killedForCPU(*os.ProcessState) bool { return false }

func peakRSS() int64 { return 0 }
