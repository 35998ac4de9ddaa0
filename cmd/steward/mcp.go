package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/mcpclient"
)

const mcpUsage = `Usage:
  steward mcp list [--owner ID]
  steward mcp tool SERVER TOOL [--write|--read] [--disable|--enable] [--owner ID]

  list    the owner's MCP servers with their tools (kind, status; header names only), as JSON lines
  tool    set one tool, like PATCH /v1/mcp/servers/{name}/tools/{tool}, taking effect on the
          next turn: --write treats it as a write (the gate asks) whatever its readOnlyHint
          says, --read lets a tool annotated readOnlyHint be a read again; --disable hides it
          from the model, --enable offers it again. A tool whose definition changed since the
          approval stays disabled until the server is approved again (POST
          /v1/mcp/servers/{name}/approve or the web app); --enable refuses it.
          Prints the tool as JSON.
`

func runMCP(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, mcpUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"list": mcpList,
		"tool": mcpTool,
	})
}

func mcpList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("mcp list", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, mcpUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		list, err := a.MCPServers.List(ctx, owners[0])
		if err != nil {
			return fmt.Errorf("mcp list: %w", err)
		}
		for _, s := range list {
			b, _ := json.Marshal(s)
			fmt.Fprintln(e.stdout, string(b))
		}
		return nil
	})
}

func mcpTool(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("mcp tool", flag.ContinueOnError)
	owner := ownerFlag(fs)
	write := fs.Bool("write", false, "treat the tool as a write")
	read := fs.Bool("read", false, "let a tool annotated readOnlyHint be a read again")
	disable := fs.Bool("disable", false, "hide the tool from the model")
	enable := fs.Bool("enable", false, "offer the tool to the model again")
	names, err := parseFlags(fs, args, mcpUsage, 2, 2)
	if err != nil {
		return err
	}
	var set mcpclient.ToolSetting
	switch {
	case *write && *read:
		return usageError{msg: "give --write or --read, not both", usage: mcpUsage}
	case *write || *read:
		set.Write = write
	}
	switch {
	case *disable && *enable:
		return usageError{msg: "give --disable or --enable, not both", usage: mcpUsage}
	case *disable || *enable:
		set.Enabled = enable
	}
	if set.Write == nil && set.Enabled == nil {
		return usageError{msg: "give --write, --read, --disable or --enable", usage: mcpUsage}
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		t, err := a.MCPServers.SetTool(ctx, owners[0], names[0], names[1], set)
		if err != nil {
			return fmt.Errorf("mcp tool: %w", err)
		}
		b, _ := json.Marshal(t)
		fmt.Fprintln(e.stdout, string(b))
		return nil
	})
}
