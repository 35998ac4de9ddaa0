package tools

import "fmt"

// Builtins returns the built-in tools: get_current_time, calculate, create_task,
// complete_task, list_tasks, remember, search_memory, forget, notify and the ledger's tools.
func Builtins() []Tool {
	return append([]Tool{
		currentTimeTool(),
		calculateTool(),
		createTaskTool(),
		completeTaskTool(),
		listTasksTool(),
		rememberTool(),
		searchMemoryTool(),
		forgetTool(),
		notifyTool(),
	}, LedgerTools()...)
}

// DefaultRegistry returns a registry of the built-in tools. It panics only if a built-in is
// broken, which the package's tests rule out.
func DefaultRegistry() *Registry {
	r, err := NewRegistry(Builtins()...)
	if err != nil {
		panic(fmt.Sprintf("tools: built-in registry: %v", err))
	}
	return r
}
