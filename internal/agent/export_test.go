package agent

// SetAfterExecuting installs the crash hook for tests: it runs after an external call was
// journaled executing and before it runs.
func (r *Runner) SetAfterExecuting(f func(callID string) error) { r.afterExecuting = f }

// TagsAsRead counts the data tags a model reads in a text (data_test.go), for the injection
// suite.
var TagsAsRead = tagsAsRead

// SetHooks replaces the runner's hooks, for tests that change them between turns.
func (r *Runner) SetHooks(h Hooks) { r.hooks = h }
