// Package builtin is the built-in toolset: the time, a calculator, tasks, structured memory
// (remember, search_memory, forget) and notifications, over the Data port
// (docs/ARCHITECTURE.md §1, "Tools and toolsets").
package builtin

import "github.com/stewardhq/steward/internal/tools"

// Tools returns the built-in tools: get_current_time, calculate, create_task, complete_task,
// list_tasks, remember, search_memory, forget and notify.
func Tools() []tools.Tool {
	return []tools.Tool{
		currentTimeTool(),
		calculateTool(),
		createTaskTool(),
		completeTaskTool(),
		listTasksTool(),
		rememberTool(),
		searchMemoryTool(),
		forgetTool(),
		notifyTool(),
	}
}
