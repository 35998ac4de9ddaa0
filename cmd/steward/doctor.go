package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/admin"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/shell"
)

const doctorUsage = `Usage: steward doctor [--json]

Checks the installation, one line per check: the database is reachable as steward_owner
(DATABASE_URL), steward_app (APP_DATABASE_URL) and steward_door (DOOR_DATABASE_URL), and
neither runtime URL connects as a role that owns the tables or bypasses row-level security;
pgvector is installed and recent; migrations are current; the roles are right (the runtime
roles own nothing and cannot alter the schema; the door only reads); the app role may only
revoke API keys, and revocation is final; row-level security is enabled and forced with
USING and WITH CHECK on every owner table; no unreviewed SECURITY DEFINER function; every view
is security_invoker; the audit log is append-only; the app role sees no owner when none is
set; which models answer, at what price (a Gemini model without a price fails: see
STEWARD_MODEL_PRICES in docs/CONFIGURATION.md); and the sign-in providers for mail and
calendar with their redirect URI. Exits 1 if any check failed (a warning is not a failure).
`

// Doctor check statuses.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
)

// doctorCheck is one line of the doctor's report.
type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

func runDoctor(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON: {\"ok\", \"checks\": [{\"name\", \"status\", \"detail\"}]}")
	if _, err := parseFlags(fs, args, doctorUsage, 0, 0); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	checks := diagnose(ctx, cfg)
	failed := 0
	for _, c := range checks {
		if c.Status == statusFail {
			failed++
		}
	}
	if *asJSON {
		if err := writeJSON(e.stdout, struct {
			OK     bool          `json:"ok"`
			Checks []doctorCheck `json:"checks"`
		}{failed == 0, checks}); err != nil {
			return err
		}
	} else {
		printChecks(e.stdout, checks)
	}
	if failed > 0 {
		return fmt.Errorf("doctor: %d of %d checks failed", failed, len(checks))
	}
	return nil
}

// diagnose runs every check: configuration, the database's (admin.Diagnose), the model's.
func diagnose(ctx context.Context, cfg config.Config) []doctorCheck {
	var checks []doctorCheck
	if err := cfg.Require("DATABASE_URL", "APP_DATABASE_URL", "DOOR_DATABASE_URL"); err != nil {
		checks = append(checks, doctorCheck{"configuration", statusFail, oneLine(err.Error())})
	} else {
		urls := admin.RoleURLs{Owner: cfg.DatabaseURL, App: cfg.AppDatabaseURL, Door: cfg.DoorDatabaseURL}
		for _, c := range admin.Diagnose(ctx, urls, memory.Dimension) {
			status := statusOK
			if !c.OK {
				status = statusFail
			}
			checks = append(checks, doctorCheck{c.Name, status, oneLine(c.Detail)})
		}
	}
	return append(checks, shellCheck(ctx, cfg), oauthCheck(cfg), modelCheck(cfg))
}

// oauthCheck names the sign-in providers for mail and calendar and the redirect URI to
// register with each (docs/MAIL.md); without STEWARD_PUBLIC_URL it is a warning.
func oauthCheck(cfg config.Config) doctorCheck {
	var names []string
	for _, p := range []struct {
		name string
		c    config.OAuthProvider
	}{{"google", cfg.OAuth.Google}, {"microsoft", cfg.OAuth.Microsoft}, {"generic", cfg.OAuth.Generic}} {
		if p.c.ClientID != "" {
			names = append(names, p.name)
		}
	}
	if len(names) == 0 {
		return doctorCheck{"oauth", statusOK, "no sign-in provider (STEWARD_OAUTH_*): mail and calendar connect with passwords"}
	}
	if cfg.PublicURL == "" {
		return doctorCheck{"oauth", statusWarn, strings.Join(names, ", ") + " sign-in without STEWARD_PUBLIC_URL: the redirect URI is " +
			cfg.PasskeyOrigin + "/oauth/callback, which only a browser on this machine reaches"}
	}
	return doctorCheck{"oauth", statusOK, strings.Join(names, ", ") + " sign-in; the redirect URI to register is " + strings.TrimRight(cfg.PublicURL, "/") + "/oauth/callback"}
}

// shellCheck runs a command in run_command's sandbox and says which bounds apply here; with
// run_command off a failure is only a note (docs/CODE.md).
func shellCheck(ctx context.Context, cfg config.Config) doctorCheck {
	sb := app.ShellSandbox(cfg)
	err := sb.Check(ctx)
	switch {
	case !cfg.Shell && err != nil:
		return doctorCheck{"shell", statusOK, "run_command off (STEWARD_SHELL); its sandbox is not available here: " + oneLine(err.Error())}
	case !cfg.Shell:
		return doctorCheck{"shell", statusOK, "run_command off (STEWARD_SHELL); its sandbox (bubblewrap) is available"}
	case err != nil:
		return doctorCheck{"shell", statusFail, "STEWARD_SHELL=on but " + oneLine(err.Error())}
	}
	b := sb.Bounds()
	detail := fmt.Sprintf("run_command on, under bubblewrap (a command ran); workspaces in %s, %d MB each; /tmp and /dev/shm %d MB each; ",
		sb.Root, b.Disk>>20, b.Tmp>>20)
	if b.Cgroup == "" {
		return doctorCheck{"shell", statusWarn, detail + fmt.Sprintf("memory bounded only per process (%d MB of address space, %d processes), no cgroup: %s",
			shell.Memory>>20, shell.Processes, oneLine(b.NoCgroup))}
	}
	return doctorCheck{"shell", statusOK, detail + fmt.Sprintf("memory %d MB per command (cgroup %s)", b.Memory>>20, b.Cgroup)}
}

// modelCheck says which models answer and at what price. The offline demo model is a
// warning, not a failure; a Gemini model without a price fails (serve and the Lambda functions
// refuse to start with it).
func modelCheck(cfg config.Config) doctorCheck {
	if cfg.GeminiAPIKey == "" {
		return doctorCheck{"model", statusWarn, "demo model (offline), set GEMINI_API_KEY for Gemini"}
	}
	if err := app.CheckPrices(cfg); err != nil {
		return doctorCheck{"model", statusFail, oneLine(err.Error())}
	}
	prices := app.Prices(cfg)
	price := func(model string) string {
		p, _ := prices.Lookup(model)
		return fmt.Sprintf("%s ($%.2f/$%.2f per 1M tokens in/out)", model, p.Input, p.Output)
	}
	detail := "gemini " + price(cfg.Model) + "; fast " + price(cfg.FastModel)
	if cfg.GeminiBaseURL != "" {
		detail += " via " + cfg.GeminiBaseURL
	}
	return doctorCheck{"model", statusOK, detail}
}

// printChecks prints one line per check: a green ✔, a yellow ! or a red ✘ (colour only on a
// terminal), the check's name and the detail or reason.
func printChecks(w io.Writer, checks []doctorCheck) {
	color := app.IsTerminal(w)
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	for _, c := range checks {
		mark := paint("32", "✔")
		switch c.Status {
		case statusWarn:
			mark = paint("33", "!")
		case statusFail:
			mark = paint("31", "✘")
		}
		fmt.Fprintf(w, "%s %-26s %s\n", mark, c.Name, c.Detail)
	}
}
