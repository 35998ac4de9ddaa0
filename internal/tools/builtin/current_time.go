package builtin

import (
	"context"
	"strings"
	"time"
	_ "time/tzdata" // Lambda images carry no zoneinfo; embed it.

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// currentTimeArgs are the arguments of get_current_time.
type currentTimeArgs struct {
	Timezone string `json:"timezone,omitempty" jsonschema:"IANA time zone name such as Europe/Paris or America/New_York; default UTC"`

	loc *time.Location
}

// Check loads the time zone.
func (a *currentTimeArgs) Check() error {
	name := strings.TrimSpace(a.Timezone)
	if name == "" {
		name = "UTC"
	}
	if name == "Local" {
		return tools.ArgErrorf("timezone", "%q is not allowed; give an IANA name such as Europe/Paris", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return &tools.ArgError{Field: "timezone", Msg: "unknown time zone " + tools.QuoteValue(name) + "; give an IANA name such as Europe/Paris, America/New_York or UTC", Err: err}
	}
	a.loc = loc
	return nil
}

// currentTimeOutput is the output of get_current_time.
type currentTimeOutput struct {
	Time     string `json:"time"`
	Timezone string `json:"timezone"`
	Weekday  string `json:"weekday"`
}

// currentTimeTool returns the get_current_time tool (read): the current time in a time zone.
func currentTimeTool() tools.Tool {
	return tools.Say(tools.New("get_current_time",
		"Get the current date and time (RFC 3339) and weekday, in UTC or in the given IANA time zone.",
		steward.KindRead,
		func(_ context.Context, env tools.Env, a currentTimeArgs) (any, error) {
			now := env.Time().In(a.loc)
			return currentTimeOutput{
				Time:     now.Format(time.RFC3339),
				Timezone: a.loc.String(),
				Weekday:  now.Weekday().String(),
			}, nil
		}), sayCurrentTime, saidCurrentTime)
}

func sayCurrentTime(a currentTimeArgs) string {
	if tz := strings.TrimSpace(a.Timezone); tz != "" {
		return "Check the time in " + tools.Clip(tz, 40)
	}
	return "Check the time"
}

func saidCurrentTime(_ currentTimeArgs, o currentTimeOutput) string {
	t, err := time.Parse(time.RFC3339, o.Time)
	if err != nil {
		return "It is " + tools.Clip(o.Time, 40)
	}
	return "It is " + t.Format("Monday 2 Jan 15:04") + " (" + tools.Clip(o.Timezone, 40) + ")"
}
