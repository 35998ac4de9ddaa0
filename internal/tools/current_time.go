package tools

import (
	"context"
	"strings"
	"time"
	_ "time/tzdata" // Lambda images carry no zoneinfo; embed it.

	"github.com/stewardhq/steward/internal/steward"
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
		return argErrorf("timezone", "%q is not allowed; give an IANA name such as Europe/Paris", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return &ArgError{Field: "timezone", Msg: "unknown time zone " + quote(name) + "; give an IANA name such as Europe/Paris, America/New_York or UTC", Err: err}
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
func currentTimeTool() Tool {
	return Say(New("get_current_time",
		"Get the current date and time (RFC 3339) and weekday, in UTC or in the given IANA time zone.",
		steward.KindRead,
		func(_ context.Context, env Env, a currentTimeArgs) (any, error) {
			now := env.Now.Now().In(a.loc)
			return currentTimeOutput{
				Time:     now.Format(time.RFC3339),
				Timezone: a.loc.String(),
				Weekday:  now.Weekday().String(),
			}, nil
		}), sayCurrentTime, saidCurrentTime)
}

// quote quotes a value for an error message, shortened so a huge value cannot flood it.
func quote(s string) string {
	return `"` + truncate(s, 80) + `"`
}

func sayCurrentTime(a currentTimeArgs) string {
	if tz := strings.TrimSpace(a.Timezone); tz != "" {
		return "Check the time in " + Clip(tz, 40)
	}
	return "Check the time"
}

func saidCurrentTime(_ currentTimeArgs, o currentTimeOutput) string {
	t, err := time.Parse(time.RFC3339, o.Time)
	if err != nil {
		return "It is " + Clip(o.Time, 40)
	}
	return "It is " + t.Format("Monday 2 Jan 15:04") + " (" + Clip(o.Timezone, 40) + ")"
}
