package store

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
)

// CreateRule stores a standing rule; its Match must be set (the schema has no default).
func (t Rules) Create(ctx context.Context, r steward.Rule) (steward.Rule, error) {
	row, err := t.q.CreateRule(ctx, db.CreateRuleParams{OwnerID: t.ownerID, Tool: r.Tool,
		Predicate: jsonOrEmpty(r.Predicate), Match: r.Match, Effect: r.Effect, Source: r.Source, Note: r.Note})
	if err != nil {
		return steward.Rule{}, notFound("create rule", err)
	}
	return toRule(row), nil
}

// Rules lists the owner's standing rules.
func (t Rules) List(ctx context.Context) ([]steward.Rule, error) {
	rows, err := t.q.ListRules(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	return toRules(rows), nil
}

// RulesFor lists the rules that may apply to a tool (its own and "*").
func (t Rules) For(ctx context.Context, tool string) ([]steward.Rule, error) {
	rows, err := t.q.RulesForTool(ctx, db.RulesForToolParams{OwnerID: t.ownerID, Tool: tool})
	if err != nil {
		return nil, fmt.Errorf("rules for %s: %w", tool, err)
	}
	return toRules(rows), nil
}

// DeleteRule removes a standing rule.
func (t Rules) Delete(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.DeleteRule(ctx, db.DeleteRuleParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("delete rule", n, err)
}

func toRules(rows []db.StandingRule) []steward.Rule {
	out := make([]steward.Rule, len(rows))
	for i, r := range rows {
		out[i] = toRule(r)
	}
	return out
}

func toRule(r db.StandingRule) steward.Rule {
	return steward.Rule{ID: r.ID, Tool: r.Tool, Predicate: r.Predicate, Match: r.Match, Effect: r.Effect, Source: r.Source,
		Note: r.Note, CreatedAt: r.CreatedAt}
}

// AppendEvents appends rows to the audit log in one statement.
func (t Journal) AppendEvents(ctx context.Context, turnID *uuid.UUID, events []steward.NewEvent) error {
	p := db.AppendAuditBatchParams{OwnerID: t.ownerID, TurnID: nullUUID(turnID),
		Seqs: make([]int32, len(events)), Kinds: make([]string, len(events)), Datas: make([][]byte, len(events))}
	for i, e := range events {
		p.Seqs[i], p.Kinds[i], p.Datas[i] = int32(e.Seq), e.Kind, jsonOrEmpty(e.Data)
	}
	_, err := t.q.AppendAuditBatch(ctx, p)
	return notFoundOrNil("append audit", err)
}

// TurnEvents returns one turn's audit trail in order.
func (t Journal) TurnEvents(ctx context.Context, turnID uuid.UUID) ([]steward.Event, error) {
	rows, err := t.q.ListTurnAudit(ctx, db.ListTurnAuditParams{OwnerID: t.ownerID, TurnID: nullUUID(&turnID)})
	if err != nil {
		return nil, fmt.Errorf("turn events: %w", err)
	}
	return toEvents(rows), nil
}

// RecentEvents returns the owner's latest audit rows, newest first.
func (t Journal) RecentEvents(ctx context.Context, limit int) ([]steward.Event, error) {
	rows, err := t.q.ListAudit(ctx, db.ListAuditParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("recent events: %w", err)
	}
	return toEvents(rows), nil
}

func toEvents(rows []db.AuditLog) []steward.Event {
	out := make([]steward.Event, len(rows))
	for i, r := range rows {
		out[i] = toEvent(r)
	}
	return out
}

func toEvent(r db.AuditLog) steward.Event {
	return steward.Event{ID: r.ID, TurnID: ptrUUID(r.TurnID), Seq: int(r.Seq), Kind: r.Kind, Data: r.Data, CreatedAt: r.CreatedAt}
}
