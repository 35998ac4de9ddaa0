package ledgertools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/accounting"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

func findSubscriptionsTool() tools.Tool {
	return tools.Say(tools.New("find_subscriptions",
		"Find the owner's recurring payments (subscriptions, rent): the same merchant charging a similar amount weekly, monthly or yearly, with the date each is next expected.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, _ struct{}) (any, error) {
			l, err := env.RequireLedger()
			if err != nil {
				return nil, err
			}
			entries, err := l.Entries(ctx, accounting.AllFrom, accounting.AllTo)
			if err != nil {
				return nil, fmt.Errorf("find subscriptions: %w", err)
			}
			return map[string]any{"subscriptions": accounting.FindSubscriptions(entries)}, nil
		}), sayFindSubscriptions, saidFindSubscriptions)
}

// findAnomaliesArgs are the arguments of find_anomalies.
type findAnomaliesArgs struct {
	From string `json:"from,omitempty" jsonschema:"first day, YYYY-MM-DD"`
	To   string `json:"to,omitempty" jsonschema:"last day (included), YYYY-MM-DD"`

	from, to time.Time
}

func (a *findAnomaliesArgs) Check() error {
	var err error
	a.from, a.to, err = dayRange(a.From, a.To)
	return err
}

func findAnomaliesTool() tools.Tool {
	return tools.Say(tools.New("find_anomalies",
		"Find ledger transactions worth a look between two dates (both optional, included): duplicate charges, charges far above the merchant's usual amount, and refunds.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a findAnomaliesArgs) (any, error) {
			l, err := env.RequireLedger()
			if err != nil {
				return nil, err
			}
			entries, err := l.Entries(ctx, accounting.AllFrom, accounting.AllTo)
			if err != nil {
				return nil, fmt.Errorf("find anomalies: %w", err)
			}
			return map[string]any{"anomalies": accounting.FindAnomalies(entries, a.from, a.to)}, nil
		}), sayFindAnomalies, saidFindAnomalies)
}

func sayFindSubscriptions(struct{}) string { return "Find recurring payments" }

func saidFindSubscriptions(_ struct{}, o struct {
	Subscriptions []json.RawMessage `json:"subscriptions"`
}) string {
	return "Found " + tools.Count(len(o.Subscriptions), "recurring payment")
}

func sayFindAnomalies(a findAnomaliesArgs) string {
	return "Look for unusual transactions" + tools.Span(a.From, a.To)
}

func saidFindAnomalies(_ findAnomaliesArgs, o struct {
	Anomalies []json.RawMessage `json:"anomalies"`
}) string {
	return "Found " + tools.Count(len(o.Anomalies), "unusual transaction")
}
