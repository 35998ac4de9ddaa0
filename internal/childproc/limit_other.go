//go:build !unix

package childproc

import "os"

// LimitSelf cannot bound a process on this system: the child's deadline still holds.
func LimitSelf(memory, cpu int64) error { return nil }

// KilledForCPU is always false here.
func KilledForCPU(*os.ProcessState) bool { return false }

// PeakRSS is unknown (0) here.
func PeakRSS() int64 { return 0 }

// RSS is unknown (0) here.
func RSS() int64 { return 0 }
