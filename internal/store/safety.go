package store

import (
	"context"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
)

// Controls reads the kill switches that apply to the owner.
func (t Safety) Controls(ctx context.Context) (steward.Controls, error) {
	r, err := t.controlState(ctx)
	if err != nil {
		return steward.Controls{}, err
	}
	return toControls(r.OwnerKilledAt, r.OwnerKillReason, r.GlobalKilledAt, r.GlobalKillReason), nil
}

// controlState reads the kill switches and the mode; a pipelined transaction reads them once.
func (t Safety) controlState(ctx context.Context) (db.ControlStateRow, error) {
	if t.control != nil && !t.grouped() {
		return *t.control, nil
	}
	r, err := t.q.ControlState(ctx, t.ownerID)
	if err != nil {
		return r, notFound("controls", err)
	}
	if t.pipelined {
		t.control = &r
		notifiable := r.Notifiable
		t.notifiable = &notifiable
	}
	return r, nil
}

func toControls(ownerAt *time.Time, ownerWhy string, globalAt *time.Time, globalWhy string) steward.Controls {
	c := steward.Controls{OwnerKilled: ownerAt != nil, OwnerReason: ownerWhy, GlobalKilled: globalAt != nil, GlobalReason: globalWhy}
	if ownerAt != nil {
		c.Since = ownerAt
	}
	if globalAt != nil {
		c.Since = globalAt
	}
	return c
}

// AdmitState reads, in one statement, what admitting a turn needs: the kill switches and
// the owner's budget use since midnight UTC with their limits.
func (t Safety) AdmitState(ctx context.Context) (steward.Controls, steward.DailyUsage, error) {
	r, err := t.q.AdmitState(ctx, t.ownerID)
	if err != nil {
		return steward.Controls{}, steward.DailyUsage{}, notFound("admit state", err)
	}
	if t.pipelined {
		// The same kill switches and mode ControlState reads: the transaction's gate uses them.
		t.control = &db.ControlStateRow{OwnerKilledAt: r.OwnerKilledAt, OwnerKillReason: r.OwnerKillReason,
			GlobalKilledAt: r.GlobalKilledAt, GlobalKillReason: r.GlobalKillReason, OwnerMode: r.OwnerMode}
	}
	return toControls(r.OwnerKilledAt, r.OwnerKillReason, r.GlobalKilledAt, r.GlobalKillReason),
		steward.DailyUsage{Messages: int(r.Messages), CostMicros: r.CostMicros, MessageLimit: int(r.DailyMessages), CostLimitMicros: r.DailyCostMicros}, nil
}

// SetKill engages (with a reason) or releases the owner's kill switch.
func (t Safety) SetKill(ctx context.Context, engaged bool, reason string) error {
	var at *time.Time
	if engaged {
		now := time.Now()
		at = &now
	}
	t.control = nil
	n, err := t.q.SetOwnerKill(ctx, db.SetOwnerKillParams{OwnerID: t.ownerID, KilledAt: at, KillReason: reason})
	return rowsOrNotFound("set kill switch", n, err)
}

// LockOwner serialises the owner's concurrent budget checks until the transaction ends.
func (t Safety) LockOwner(ctx context.Context) error {
	return notFoundOrNil("lock owner", t.q.LockOwner(ctx, t.ownerID.String()))
}

// Cap returns the owner's money cap for a currency; ok=false when there is none.
func (t Safety) Cap(ctx context.Context, currency string) (steward.Cap, bool, error) {
	r, err := t.q.GetCap(ctx, db.GetCapParams{OwnerID: t.ownerID, Currency: currency})
	if err != nil {
		err = notFound("cap", err)
		if steward.ErrorCode(err) == steward.CodeNotFound {
			return steward.Cap{}, false, nil
		}
		return steward.Cap{}, false, err
	}
	return toCap(r), true, nil
}

// SetCap creates or replaces the owner's cap for a currency.
func (t Safety) SetCap(ctx context.Context, c steward.Cap) (steward.Cap, error) {
	r, err := t.q.UpsertCap(ctx, db.UpsertCapParams{OwnerID: t.ownerID, Currency: c.Currency,
		PerActionMinor: c.PerActionMinor, WindowMinor: c.WindowMinor, WindowSeconds: int32(c.Window / time.Second)})
	if err != nil {
		return steward.Cap{}, notFound("set cap", err)
	}
	return toCap(r), nil
}

// Caps lists the owner's caps.
func (t Safety) Caps(ctx context.Context) ([]steward.Cap, error) {
	rows, err := t.q.ListCaps(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list caps: %w", err)
	}
	out := make([]steward.Cap, len(rows))
	for i, r := range rows {
		out[i] = toCap(r)
	}
	return out, nil
}

func toCap(r db.SpendingCap) steward.Cap {
	return steward.Cap{Currency: r.Currency, PerActionMinor: r.PerActionMinor, WindowMinor: r.WindowMinor,
		Window: time.Duration(r.WindowSeconds) * time.Second}
}

// SpentInWindow sums the ledger for a currency over the last window.
func (t Safety) SpentInWindow(ctx context.Context, currency string, window time.Duration) (int64, error) {
	n, err := t.q.SpentInWindow(ctx, db.SpentInWindowParams{OwnerID: t.ownerID, Currency: currency, WindowSeconds: window.Seconds()})
	if err != nil {
		return 0, fmt.Errorf("spent in window: %w", err)
	}
	return n, nil
}

// RecordSpend adds an executed write's amount to the ledger.
func (t Safety) RecordSpend(ctx context.Context, turnID uuid.UUID, callID, tool string, m steward.Money) error {
	return notFoundOrNil("record spend", t.q.RecordSpend(ctx, db.RecordSpendParams{OwnerID: t.ownerID,
		TurnID: nullUUID(&turnID), CallID: callID, Tool: tool, AmountMinor: m.Minor, Currency: m.Currency}))
}
