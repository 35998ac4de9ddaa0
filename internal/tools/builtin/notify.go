package builtin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Limits of notification fields, in characters.
const (
	maxNotifyTitle   = 200
	maxNotifyMessage = 2000
)

// notifyArgs are the arguments of notify.
type notifyArgs struct {
	Message string `json:"message" jsonschema:"the message for the owner, at most 2000 characters"`
	Title   string `json:"title,omitempty" jsonschema:"short title, at most 200 characters"`
	Channel string `json:"channel,omitempty" jsonschema:"the name of one of the owner's notification channels; empty for their default channel"`
}

// Check trims the text and checks the lengths.
func (a *notifyArgs) Check() error {
	a.Message = strings.TrimSpace(a.Message)
	a.Title = strings.TrimSpace(a.Title)
	a.Channel = strings.TrimSpace(a.Channel)
	if err := tools.CheckLength("channel", a.Channel, 0, 32); err != nil {
		return err
	}
	if err := tools.CheckLength("message", a.Message, 1, maxNotifyMessage); err != nil {
		return err
	}
	return tools.CheckLength("title", a.Title, 0, maxNotifyTitle)
}

// notifyTool returns the notify tool (write): a message for the owner. Its links are what a
// tainted turn may not send on a rule (docs/SECURITY.md, "Notifications carry no previews").
func notifyTool() tools.Tool {
	t := tools.Say(tools.New("notify",
		"Send the owner a notification, e.g. a reminder or the result of a background run, to their default channel or the one named.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a notifyArgs) (any, error) {
			d, err := env.RequireData()
			if err != nil {
				return nil, err
			}
			n, err := d.CreateNotification(ctx, a.Channel, a.Title, a.Message)
			if err != nil {
				return nil, fmt.Errorf("create notification: %w", err)
			}
			return map[string]any{"notification": n}, nil
		}), sayNotify, saidNotify)
	t.Links = notifyLinks
	return t
}

// notifyLinks are the links in a notify's title and message; arguments it cannot read are
// one link, so a tainted turn asks.
func notifyLinks(args json.RawMessage) []string {
	var a notifyArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return []string{string(args)}
	}
	return tools.Links(a.Title + "\n" + a.Message)
}

func sayNotify(a notifyArgs) string {
	s := "Notify you: " + tools.Quote(cmp.Or(strings.TrimSpace(a.Title), a.Message))
	if c := strings.TrimSpace(a.Channel); c != "" {
		s += " on " + tools.Clip(c, 30)
	}
	return s
}

func saidNotify(notifyArgs, struct{}) string { return "Notification queued" }
