package config

import "time"

// AutomationLimits are the owner's limits on reminders and automations (docs/AUTOMATIONS.md).
type AutomationLimits struct {
	// MaxAutomations is how many active automations an owner may have
	// (STEWARD_AUTOMATIONS_MAX, 100); MaxReminders how many pending reminders
	// (STEWARD_REMINDERS_MAX, 1000).
	MaxAutomations, MaxReminders int
	// MinInterval is the shortest time between two runs of one automation
	// (STEWARD_AUTOMATION_MIN_INTERVAL, 15m); a more frequent schedule is refused.
	MinInterval time.Duration
	// MaxFailures is how many failed runs in a row pause an automation and tell the owner
	// (STEWARD_AUTOMATION_MAX_FAILURES, 3).
	MaxFailures int
}

// automations reads the Automations area.
func (r *reader) automations() AutomationLimits {
	a := AutomationLimits{
		MaxAutomations: r.intIn("STEWARD_AUTOMATIONS_MAX", 100, 1, 10000),
		MaxReminders:   r.intIn("STEWARD_REMINDERS_MAX", 1000, 1, 100000),
		MinInterval:    r.duration("STEWARD_AUTOMATION_MIN_INTERVAL", 15*time.Minute),
		MaxFailures:    r.intIn("STEWARD_AUTOMATION_MAX_FAILURES", 3, 1, 100),
	}
	if a.MinInterval < time.Minute {
		r.fail("STEWARD_AUTOMATION_MIN_INTERVAL", a.MinInterval.String(), "must be at least 1m (the scheduler's tick)")
	}
	return a
}
