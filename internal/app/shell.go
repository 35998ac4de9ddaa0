//go:build !lambda.norpc

package app

import (
	"cmp"
	"os"
	"path/filepath"
	"runtime"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/shell"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/shelltools"
)

// The shell (run_command) is left out of the Lambda bootstraps, which are built with the
// lambda.norpc tag (shell_lambda.go; docs/ARCHITECTURE.md §17).

// shellTools is run_command when the operator turned it on (STEWARD_SHELL=on) in `steward
// serve` on Linux, and nothing otherwise: never in a Lambda function (docs/ARCHITECTURE.md §17).
func shellTools(cfg config.Config) []tools.Tool {
	if !cfg.Shell || runtime.GOOS != "linux" || os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		return nil
	}
	return shelltools.Tools(ShellSandbox(cfg), cfg.ShellRules)
}

// ShellSandbox is the sandbox run_command uses, under cfg.ShellRoot (by default
// <temp dir>/steward-workspaces), with the configured bounds.
func ShellSandbox(cfg config.Config) *shell.Sandbox {
	return &shell.Sandbox{Root: cmp.Or(cfg.ShellRoot, filepath.Join(os.TempDir(), "steward-workspaces")),
		Memory: int64(cfg.ShellMemoryMB) << 20, Tmp: int64(cfg.ShellTmpMB) << 20, Disk: int64(cfg.ShellDiskMB) << 20,
		Cgroup: cfg.ShellCgroup}
}
