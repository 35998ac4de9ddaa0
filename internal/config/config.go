// Package config reads Steward's one configuration struct from the environment, once, at
// start, and validates it. Nothing else in Steward reads environment variables.
//
// Config is composed of one struct per area, each in its own file with its reader and its
// checks: Database, Server, LLM (the language models), Voice, Memory, Turns, Egress,
// Documents, Sandbox (run_command), Web, Keys, Telegram, Push, Trading, Retention, AWS, OAuth and Automations.
// The areas are embedded, so a setting is read as cfg.TelegramBotToken wherever it lives;
// Load reads every area and returns every problem at once, each naming its variable.
package config

import (
	"errors"
	"fmt"
)

// Config is every setting Steward has. docs/CONFIGURATION.md lists them.
type Config struct {
	Database
	Server
	LLM
	Voice
	Memory
	Turns
	Egress
	Documents
	Sandbox
	Web
	Keys
	Telegram
	Push
	// Trading is the owner's brokerage, off by default (docs/TRADING.md).
	Trading Trading
	// Retention is how long the sweep keeps the rows that only grow (docs/CONFIGURATION.md
	// "Retention", docs/ARCHITECTURE.md §21); zero keeps them forever.
	Retention Retention
	// AWS is the region and credentials the Lambda runtime's secret parameters (the areas'
	// …Param settings) are read with: the variables the Lambda runtime sets for the
	// function's role (AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
	AWS AWS
	// Automations are the owner's limits on reminders and automations (docs/AUTOMATIONS.md).
	Automations AutomationLimits
	// OAuth is the sign-in providers for mail and calendar (STEWARD_OAUTH_*, config/oauth.go).
	OAuth OAuth
}

// Load reads the configuration through getenv (os.Getenv in mains, a map in tests), area by
// area. The error names every variable that is malformed.
func Load(getenv func(string) string) (Config, error) {
	r := reader{getenv: getenv}
	var c Config
	c.Database = r.database()
	c.Server = r.server()
	c.LLM = r.llm()
	c.Voice = r.voice()
	c.Memory = r.memory()
	c.Turns = r.turns()
	c.Egress = r.egress()
	c.Documents = r.documents()
	c.Sandbox = r.sandbox()
	c.Web = r.web(c.Addr)
	c.Keys = r.keys()
	c.Telegram = r.telegram()
	c.Push = r.push(c.Web)
	c.Trading = r.trading()
	c.Retention = r.retention()
	c.AWS = r.aws()
	c.OAuth = r.oauth()
	c.Automations = r.automations()
	return c, errors.Join(r.errs...)
}

// Require fails, naming the variable and how to set it, when one of the named settings is
// empty. Commands call it for what they need.
func (c Config) Require(names ...string) error {
	values := map[string]string{
		"DATABASE_URL": c.DatabaseURL, "APP_DATABASE_URL": c.AppDatabaseURL, "DOOR_DATABASE_URL": c.DoorDatabaseURL,
		"SUPERUSER_DATABASE_URL": c.SuperuserDatabaseURL, "GEMINI_API_KEY": c.GeminiAPIKey,
	}
	var errs []error
	for _, n := range names {
		if values[n] == "" {
			errs = append(errs, fmt.Errorf("%s is not set (for a local database: eval \"$(scripts/devdb env | sed 's/^/export /')\")", n))
		}
	}
	return errors.Join(errs...)
}
