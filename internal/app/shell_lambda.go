//go:build lambda.norpc

package app

import (
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/tools"
)

// shellTools is nothing in a Lambda function: run_command is not built into the bootstraps
// (shell.go; docs/ARCHITECTURE.md §17).
func shellTools(config.Config) []tools.Tool { return nil }
