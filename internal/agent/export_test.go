package agent

// SetAfterExecuting installs the crash hook for tests: it runs after an external call was
// journaled executing and before it runs.
func (r *Runner) SetAfterExecuting(f func(callID string) error) { r.afterExecuting = f }
