// Package control is the kill switches, the gate mode and the daily budgets, as the owner
// and the operator see and change them (docs/ARCHITECTURE.md §7). internal/httpapi serves
// the owner's side (GET /v1/control, POST /v1/control/{stop,resume,mode}); cmd/steward serves
// the operator's (steward control, steward owners budget) through the store's door.
package control

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// MaxReason is the longest kill-switch reason, in characters.
const MaxReason = 500

// Gate modes an owner may choose.
const (
	ModeAsk  = "ask"  // a human decides writes no rule covers (the default)
	ModeDeny = "deny" // read-only safe mode: every write refused
	ModeAuto = "auto" // writes run without asking: development only
)

// Service is the owner's control: their view of the switches and budget, their own kill
// switch and gate mode. It is safe for concurrent use.
type Service struct {
	Store *store.Store
	// AllowAutoMode lets owners choose ModeAuto (STEWARD_ALLOW_AUTO_MODE).
	AllowAutoMode bool
	// Now is the clock (nil: the system clock).
	Now steward.Clock
}

// View is what applies to the owner: the kill switches, the gate mode and the daily budget
// (GET /v1/control).
type View struct {
	steward.Controls
	Stopped bool   `json:"stopped"`
	Mode    string `json:"mode"`
	Budget  Budget `json:"budget"`
}

// Budget is the owner's use since midnight UTC and their daily limits, which an operator
// sets (Operator.SetBudget). Every limit is finite: budgets fail closed.
type Budget struct {
	MessagesToday int       `json:"messages_today"`
	MessageLimit  int       `json:"message_limit"`
	CostUSDToday  float64   `json:"cost_usd_today"`
	CostLimitUSD  float64   `json:"cost_limit_usd"`
	ResetsAt      time.Time `json:"resets_at"`
}

// View reads the owner's controls, gate mode and budget.
func (s *Service) View(ctx context.Context, ownerID uuid.UUID) (View, error) {
	var v View
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		v, err = s.view(ctx, tx)
		return err
	})
	return v, err
}

func (s *Service) view(ctx context.Context, tx *store.Tx) (View, error) {
	c, u, err := tx.Safety.AdmitState(ctx)
	if err != nil {
		return View{}, err
	}
	v := View{Controls: c, Budget: Budget{MessagesToday: u.Messages, MessageLimit: u.MessageLimit,
		CostUSDToday: float64(u.CostMicros) / 1e6, CostLimitUSD: float64(u.CostLimitMicros) / 1e6,
		ResetsAt: s.Now.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)}}
	v.Stopped, _ = c.Killed()
	v.Mode, err = tx.Safety.Mode(ctx)
	return v, err
}

// Stop engages the owner's own kill switch: in-flight turns stop at their next step, new
// turns are refused until Resume. An empty reason becomes "stopped by the owner".
func (s *Service) Stop(ctx context.Context, ownerID uuid.UUID, reason string) (View, error) {
	reason, err := Reason(reason, "stopped by the owner")
	if err != nil {
		return View{}, err
	}
	return s.setKill(ctx, ownerID, true, reason)
}

// Resume releases the owner's own kill switch.
func (s *Service) Resume(ctx context.Context, ownerID uuid.UUID) (View, error) {
	return s.setKill(ctx, ownerID, false, "")
}

func (s *Service) setKill(ctx context.Context, ownerID uuid.UUID, engaged bool, reason string) (View, error) {
	var v View
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if err := tx.Safety.SetKill(ctx, engaged, reason); err != nil {
			return err
		}
		var err error
		v, err = s.view(ctx, tx)
		return err
	})
	return v, err
}

// SetMode sets the owner's gate mode: ask, deny, or auto (refused unless AllowAutoMode).
func (s *Service) SetMode(ctx context.Context, ownerID uuid.UUID, mode string) (View, error) {
	switch mode {
	case ModeAsk, ModeDeny:
	case ModeAuto:
		if !s.AllowAutoMode {
			return View{}, steward.Errorf(steward.CodeInvalid, "mode auto is disabled on this server (STEWARD_ALLOW_AUTO_MODE)")
		}
	default:
		return View{}, steward.Errorf(steward.CodeInvalid, `mode must be "ask", "deny" or "auto"`)
	}
	var v View
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if err := tx.Safety.SetMode(ctx, mode); err != nil {
			return err
		}
		var err error
		v, err = s.view(ctx, tx)
		return err
	})
	return v, err
}

// Reason checks a kill-switch reason: trimmed, def when empty, at most MaxReason characters
// of text Postgres can store.
func Reason(reason, def string) (string, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		reason = def
	}
	if utf8.RuneCountInString(reason) > MaxReason {
		return "", steward.Errorf(steward.CodeInvalid, "reason is longer than %d characters", MaxReason)
	}
	if err := steward.CheckText("reason", reason); err != nil {
		return "", err
	}
	return reason, nil
}
