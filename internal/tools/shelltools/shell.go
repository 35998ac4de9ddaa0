// Package shelltools is the shell toolset: run_command, a command line run in the owner's
// sandboxed workspace (internal/shell, docs/ARCHITECTURE.md §17). It is a write: every call
// waits for the owner, who sees the exact command line, even in auto mode, and no standing
// rule may allow it unless the operator said so (STEWARD_SHELL_RULES=on). `steward serve` on Linux only, off
// unless STEWARD_SHELL=on.
package shelltools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Runner runs a command in an owner's sandbox (internal/shell's Sandbox implements it).
type Runner interface {
	Run(ctx context.Context, owner uuid.UUID, command string) (steward.CommandResult, error)
}

// maxCommand is the longest command line accepted, in bytes.
const maxCommand = 8 << 10

// Tools returns run_command over r; rules says whether standing allow rules may run it.
func Tools(r Runner, rules bool) []tools.Tool {
	t := runCommandTool(r)
	// Its effect is outside Postgres (files, processes): journaled executing before it runs,
	// outside any transaction, never run twice.
	t.External = true
	// Nothing but the owner's yes runs it — no standing rule, no auto mode — unless the
	// operator let standing rules allow it (then auto mode, the owner's blanket yes, may too).
	t.Rules = steward.OnlyOwnerYes
	if rules {
		t.Rules = steward.RulesMayAllow
	}
	// Its output is whatever the command printed: files the owner put there, or that
	// another command fetched.
	t.Untrusted = true
	return []tools.Tool{t}
}

type runCommandArgs struct {
	Command string `json:"command" jsonschema:"the shell command line to run (with /bin/sh -c) in the owner's workspace directory"`
}

// Check bounds the command line.
func (a *runCommandArgs) Check() error {
	if strings.TrimSpace(a.Command) == "" {
		return tools.ArgErrorf("command", "must not be empty")
	}
	if strings.ContainsRune(a.Command, 0) {
		return tools.ArgErrorf("command", "must not contain a NUL character")
	}
	return tools.CheckLength("command", a.Command, 1, maxCommand)
}

func runCommandTool(r Runner) tools.Tool {
	return tools.Say(tools.New("run_command",
		fmt.Sprintf("Run a shell command line in the owner's private workspace (asks the owner first, every time): "+
			"no network, the system read-only, the workspace /work the only writable place and kept between commands; "+
			"python3 where installed. At most %v, %d KB of output.", steward.CommandTimeout, steward.CommandMaxOutput>>10),
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a runCommandArgs) (any, error) {
			if r == nil {
				return nil, fmt.Errorf("run_command has no sandbox")
			}
			res, err := r.Run(ctx, env.OwnerID, a.Command)
			if err != nil {
				return nil, fmt.Errorf("run command: %w", err)
			}
			return res, nil
		}), sayRunCommand, saidRunCommand)
}

func sayRunCommand(a runCommandArgs) string { return "Run the command " + tools.Quote(a.Command) }

func saidRunCommand(_ runCommandArgs, o steward.CommandResult) string {
	switch {
	case o.TimedOut:
		return "Stopped: it ran too long"
	case o.ExitCode == 0:
		return "Ran it (exit 0)"
	}
	return fmt.Sprintf("It failed (exit %d)", o.ExitCode)
}
