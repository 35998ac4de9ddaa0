// Command steward is Steward's local CLI and server: database setup and migrations, owner and
// API-key administration, a health check of the whole installation, and the HTTP server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/operator"
)

// version is set at build time (-ldflags "-X main.version=..."); see the Makefile.
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

const usage = `Steward: a personal AI agent that asks before it writes.

Usage: steward <command> [arguments]

Commands:
  migrate bootstrap [--print]    create the roles and database as superuser (--print: the SQL, for RDS/Aurora)
  migrate up|down|status|reset   apply or roll back the schema (down and reset need --yes)
  owners add NAME [--json]       create an owner and print its first API key (shown once)
  owners list [--json]           list owners
  owners budget --owner ID [--messages N] [--cost-usd X]
                                 set an owner's daily limits
  remote owners|keys|control|households|jobs|webhooks …
                                 the same commands on a deployment on AWS, through its migrate
                                 function (no database connection; steward remote help)
  remote migrate                 migrate a deployment's database
  households …                   households of owners and their approval policies (steward households help)
  keys add --owner ID [--name N] [--json]
                                 create another API key for an owner (shown once)
  keys list --owner ID [--json]  list an owner's keys (never the keys themselves)
  keys revoke --owner ID KEY_ID  revoke a key
  doctor [--json]                check the database, roles, row-level security and model setup
  serve                          run the HTTP server on STEWARD_ADDR
  chat [MESSAGE] [--json]        chat as an owner (STEWARD_API_KEY), approving writes inline
                                 (--voice FILE: a recording as the first message)
  speak TEXT > out.wav           read TEXT aloud with the server's speech model (docs/VOICE.md)
  control stop|resume|status     the kill switch, for the deployment or one owner (--owner)
  control cap USD                the deployment's daily cost cap across every owner
  jobs list|add|remove|run NAME  scheduled jobs (morning-briefing, weekly-review, inbox-scan)
  automations list|add|pause|resume|rm|zone  the owner's automations (docs/AUTOMATIONS.md)
  reminders list|add|cancel  the owner's reminders
  webhooks add --source NAME     an incoming signed webhook (secret shown once)
  channels add|list|remove|test  notification channels (ntfy, telegram, slack, email, webhook, webpush)
  telegram link|list|unlink      link a Telegram chat to the deployment's bot (docs/TELEGRAM.md)
  vapid-keys                     print a new Web Push key pair (STEWARD_VAPID_PUBLIC_KEY, _PRIVATE_KEY)
  accounts add-mail|add-calendar|list|test|remove
                                 the owner's mail (IMAP + SMTP) and calendar (CalDAV) (steward accounts help)
  mcp list|tool                  the owner's MCP servers; set one tool a write or disabled (steward mcp help)
  rules list|add|remove          the owner's standing rules, exact or pattern (steward rules help)
  skills list|add|scan|remove|enable|disable
                                 the owner's skills; scan runs offline for CI (steward skills help)
  trading price|account|positions|orders|caps|keys
                                 the owner's brokerage, paper first (steward trading help; docs/TRADING.md)
  conversations list|search|rename|delete
                                 the owner's conversations; delete takes the memory made from them
  export [-o FILE]               the owner's data as one zip (docs/DATA.md)
  forget --from T --to T [--yes] forget everything of a time range, counted
  memory consolidate             supersede near-duplicate memories, summarise old conversations
  ledger import FILE --account NAME
                                 import a bank statement (CSV) into the ledger
  eval [--filter CLASS] [--record] [--json FILE]
                                 run the eval suite (evals/) and print pass rates per class
  version                        print the version
  help                           print this help

Configuration comes from the environment (see docs/CONFIGURATION.md); for the local database:
  eval "$(scripts/devdb env | sed 's/^/export /')"
`

// env is where a command writes: results to stdout; warnings, logs and errors to stderr.
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	// remote is the deployment's operator service under `steward remote`; nil: the
	// commands connect to the database themselves.
	remote *operator.Service
}

// run executes one steward command line. getenv is os.Getenv in main and a map in tests; it
// is only ever passed to config.Load.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	e := env{stdout: stdout, stderr: stderr, stdin: os.Stdin}
	if len(args) == 0 {
		return usageError{msg: "no command given", usage: usage}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "version", "--version":
		fmt.Fprintln(stdout, "steward", buildVersion())
		return nil
	case "vapid-keys":
		return vapidKeys(e)
	}
	commands := map[string]func(context.Context, env, config.Config, []string) error{
		"migrate":     runMigrate,
		"owners":      runOwners,
		"households":  runHouseholds,
		"keys":        runKeys,
		"doctor":      runDoctor,
		"serve":       runServe,
		"chat":        runChat,
		"speak":       runSpeak,
		"control":     runControl,
		"jobs":        runJobs,
		"automations": runAutomations,
		"reminders":   runReminders,
		"webhooks":    runWebhooks,
		"memory":      runMemory,
		"ledger":      runLedger,
		"channels":    runChannels,
		"telegram":    runTelegram,
		"mcp":         runMCP,
		"accounts":    runAccounts,
		"rules":       runRules,
		"skills":      runSkills,
		"trading":     runTrading,
		"eval":        runEval,
		"remote":      runRemote,
		// The owner's own data (docs/DATA.md): cmd/steward/owndata.go.
		"conversations": runConversations,
		"export":        runExport,
		"forget":        runForget,
	}
	command, ok := commands[cmd]
	if !ok {
		return usageError{msg: fmt.Sprintf("unknown command %q", cmd), usage: usage}
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	// A command's log is for the person at the terminal: on stderr, in words. Only serve, a
	// server, keeps JSON lines unless STEWARD_LOG_FORMAT says otherwise.
	if getenv("STEWARD_LOG_FORMAT") == "" && cmd != "serve" {
		cfg.LogFormat = "console"
	}
	logger := app.NewLogger(cfg, stderr)
	ctx = logger.With().Str("command", cmd).Logger().WithContext(ctx)
	err = command(ctx, e, cfg, rest)
	var h helpRequest
	if errors.As(err, &h) {
		fmt.Fprint(stdout, h.usage)
		return nil
	}
	return err
}

// usageError is a mistake in the command line: exit status 2, with the usage that applies.
type usageError struct {
	msg, usage string
}

func (u usageError) Error() string { return u.msg }

// exitCode reports err on stderr as one line and returns the process's exit status: 0 for
// success, 2 for a usage mistake (followed by the usage), 1 for everything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "steward: %s\n", oneLine(err.Error()))
	var x exitError
	if errors.As(err, &x) {
		return x.code
	}
	var u usageError
	if errors.As(err, &u) {
		if u.usage != "" {
			fmt.Fprintf(stderr, "\n%s", u.usage)
		}
		return 2
	}
	return 1
}

// oneLine joins a multi-line error (errors.Join, pgx's per-host connect errors) into one
// line, dropping repeated lines.
func oneLine(s string) string {
	var b strings.Builder
	prev := ""
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" || line == prev {
			continue
		}
		switch {
		case b.Len() == 0:
		case strings.HasSuffix(prev, ":"):
			b.WriteString(" ")
		default:
			b.WriteString("; ")
		}
		b.WriteString(line)
		prev = line
	}
	return b.String()
}

// parseFlags parses a subcommand's flags, which may come before, between or after its
// positional arguments (steward owners add NAME --json), and checks the number of positional
// arguments. "--" ends the flags.
func parseFlags(fs *flag.FlagSet, args []string, usage string, minArgs, maxArgs int) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, helpRequest{usage}
			}
			return nil, usageError{msg: err.Error(), usage: usage}
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	switch {
	case len(positional) < minArgs:
		return nil, usageError{msg: "missing argument", usage: usage}
	case len(positional) > maxArgs:
		return nil, usageError{msg: fmt.Sprintf("unexpected argument %q", positional[maxArgs]), usage: usage}
	}
	return positional, nil
}

// helpRequest is -h on a subcommand: its usage goes to stdout and the exit status is 0.
type helpRequest struct{ usage string }

func (h helpRequest) Error() string { return "help requested" }

// subcommand dispatches a command family (migrate, owners, keys) to its subcommands.
func subcommand(ctx context.Context, e env, cfg config.Config, args []string, usage string,
	subs map[string]func(context.Context, env, config.Config, []string) error) error {
	if len(args) == 0 {
		return usageError{msg: "missing subcommand", usage: usage}
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(e.stdout, usage)
		return nil
	}
	sub, ok := subs[args[0]]
	if !ok {
		return usageError{msg: fmt.Sprintf("unknown subcommand %q", args[0]), usage: usage}
	}
	return sub(ctx, e, cfg, args[1:])
}

// buildVersion is the -ldflags version, else the module version or VCS revision Go recorded.
func buildVersion() string {
	if version != "dev" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return version
}
