package steward

import "time"

// The shell's domain (run_command, docs/ARCHITECTURE.md §17): what internal/shell's sandbox
// returns and the toolset (tools/shelltools) shows, without importing the sandbox.

// The default bounds of one command: its wall-clock time and the output kept.
const (
	CommandTimeout   = 30 * time.Second
	CommandMaxOutput = 64 << 10
)

// CommandResult is what a command did.
type CommandResult struct {
	ExitCode  int    `json:"exit_code"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated,omitempty"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	// PeakMemory is the most memory the sandbox held, in bytes, as its cgroup counted it (0
	// without one).
	PeakMemory int64 `json:"-"`
}
