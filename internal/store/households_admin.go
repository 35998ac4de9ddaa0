package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The operator's household administration (`steward households`, as steward_owner through
// the "directory" policies; migrations/00021_households.sql).

// HouseholdInfo is a household and its members.
type HouseholdInfo struct {
	ID        uuid.UUID         `json:"id"`
	Name      string            `json:"name"`
	Members   []HouseholdMember `json:"members"`
	CreatedAt time.Time         `json:"created_at"`
}

// HouseholdMember is a member owner.
type HouseholdMember struct {
	OwnerID uuid.UUID `json:"owner_id"`
	Name    string    `json:"name"`
}

// HouseholdPolicy names a tool, an optional minimum amount (minor units, optionally of one
// currency) and the other members who must also approve a matching call.
type HouseholdPolicy struct {
	ID             uuid.UUID   `json:"id"`
	Household      string      `json:"household"`
	Tool           string      `json:"tool"`
	MinAmountMinor *int64      `json:"min_amount_minor,omitempty"`
	Currency       string      `json:"currency,omitempty"`
	Approvers      []uuid.UUID `json:"approvers"`
	CreatedAt      time.Time   `json:"created_at"`
}

var householdName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidateHouseholdName checks a household's name: lowercase letters, digits, "-" and "_",
// at most 63 characters, starting with a letter or digit.
func ValidateHouseholdName(name string) error {
	if !householdName.MatchString(name) {
		return fmt.Errorf("household name %q must be 1 to 63 lowercase letters, digits, '-' or '_', starting with a letter or digit", name)
	}
	return nil
}

func isUnique(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505"
}

// CreateHousehold creates an empty household.
func (d *Door) CreateHousehold(ctx context.Context, name string) (HouseholdInfo, error) {
	if err := ValidateHouseholdName(name); err != nil {
		return HouseholdInfo{}, err
	}
	h := HouseholdInfo{Name: name, Members: []HouseholdMember{}}
	err := d.conn().QueryRow(ctx, `INSERT INTO households (name) VALUES ($1) RETURNING id, created_at`, name).Scan(&h.ID, &h.CreatedAt)
	if isUnique(err) {
		return h, fmt.Errorf("household %q already exists", name)
	}
	return h, err
}

func (d *Door) householdID(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, name string) (uuid.UUID, error) {
	var id uuid.UUID
	err := q.QueryRow(ctx, `SELECT id FROM households WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return id, fmt.Errorf("household %q: %w", name, ErrNotFound)
	}
	return id, err
}

// AddHouseholdMember adds an owner to a household; an owner belongs to one household at most.
func (d *Door) AddHouseholdMember(ctx context.Context, name string, ownerID uuid.UUID) error {
	hh, err := d.householdID(ctx, d.conn(), name)
	if err != nil {
		return err
	}
	var exists bool
	if err := d.conn().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM owners WHERE id = $1)`, ownerID).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("owner %s: %w", ownerID, ErrNotFound)
	}
	_, err = d.conn().Exec(ctx, `INSERT INTO household_members (owner_id, household_id) VALUES ($1, $2)`, ownerID, hh)
	if isUnique(err) {
		return fmt.Errorf("owner %s is already in a household (an owner belongs to one at most)", ownerID)
	}
	return err
}

// RemoveHouseholdMember takes an owner out of a household: its calls are no longer filed,
// and policies naming it no longer ask it.
func (d *Door) RemoveHouseholdMember(ctx context.Context, name string, ownerID uuid.UUID) error {
	hh, err := d.householdID(ctx, d.conn(), name)
	if err != nil {
		return err
	}
	tag, err := d.conn().Exec(ctx, `DELETE FROM household_members WHERE owner_id = $1 AND household_id = $2`, ownerID, hh)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("owner %s is not a member of %q: %w", ownerID, name, ErrNotFound)
	}
	return err
}

// ListHouseholds lists every household with its members.
func (d *Door) ListHouseholds(ctx context.Context) ([]HouseholdInfo, error) {
	rows, err := d.conn().Query(ctx, `SELECT h.id, h.name, h.created_at, m.owner_id, o.name
		FROM households h LEFT JOIN household_members m ON m.household_id = h.id LEFT JOIN owners o ON o.id = m.owner_id
		ORDER BY h.name, o.name, m.owner_id`)
	if err != nil {
		return nil, fmt.Errorf("list households: %w", err)
	}
	defer rows.Close()
	out := []HouseholdInfo{}
	for rows.Next() {
		var h HouseholdInfo
		var owner *uuid.UUID
		var oname *string
		if err := rows.Scan(&h.ID, &h.Name, &h.CreatedAt, &owner, &oname); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].ID != h.ID {
			h.Members = []HouseholdMember{}
			out = append(out, h)
		}
		if owner != nil {
			last := &out[len(out)-1]
			last.Members = append(last.Members, HouseholdMember{OwnerID: *owner, Name: *oname})
		}
	}
	return out, rows.Err()
}

var toolName = regexp.MustCompile(`^[a-z0-9_.-]{1,64}$`)

// AddHouseholdPolicy adds an approval policy; every approver must be a member.
func (d *Door) AddHouseholdPolicy(ctx context.Context, p HouseholdPolicy) (HouseholdPolicy, error) {
	switch {
	case !toolName.MatchString(p.Tool):
		return p, fmt.Errorf("tool %q is not a tool name", p.Tool)
	case len(p.Approvers) == 0 || len(p.Approvers) > 20:
		return p, fmt.Errorf("give 1 to 20 approvers")
	case p.MinAmountMinor != nil && *p.MinAmountMinor < 0:
		return p, fmt.Errorf("the minimum amount must not be negative")
	case p.Currency != "" && !regexp.MustCompile(`^[A-Z]{3}$`).MatchString(p.Currency):
		return p, fmt.Errorf("currency %q must be an ISO 4217 code such as EUR", p.Currency)
	}
	err := inTx(ctx, d.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		hh, err := d.householdID(ctx, tx, p.Household)
		if err != nil {
			return err
		}
		for _, a := range p.Approvers {
			var member bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM household_members WHERE owner_id = $1 AND household_id = $2)`, a, hh).Scan(&member); err != nil {
				return err
			}
			if !member {
				return fmt.Errorf("approver %s is not a member of %q (add it first: steward households add %s %s)", a, p.Household, p.Household, a)
			}
		}
		var cur *string
		if p.Currency != "" {
			cur = &p.Currency
		}
		return tx.QueryRow(ctx, `INSERT INTO household_policies (household_id, tool, min_amount_minor, currency, approvers)
			VALUES ($1, $2, $3, $4, $5) RETURNING id, created_at`, hh, p.Tool, p.MinAmountMinor, cur, p.Approvers).Scan(&p.ID, &p.CreatedAt)
	})
	return p, err
}

// ListHouseholdPolicies lists a household's policies.
func (d *Door) ListHouseholdPolicies(ctx context.Context, name string) ([]HouseholdPolicy, error) {
	hh, err := d.householdID(ctx, d.conn(), name)
	if err != nil {
		return nil, err
	}
	rows, err := d.conn().Query(ctx, `SELECT id, tool, min_amount_minor, coalesce(currency, ''), approvers, created_at
		FROM household_policies WHERE household_id = $1 ORDER BY tool, created_at`, hh)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (HouseholdPolicy, error) {
		p := HouseholdPolicy{Household: name}
		err := r.Scan(&p.ID, &p.Tool, &p.MinAmountMinor, &p.Currency, &p.Approvers, &p.CreatedAt)
		return p, err
	})
}

// RemoveHouseholdPolicy deletes a policy of the household; calls already filed keep waiting.
func (d *Door) RemoveHouseholdPolicy(ctx context.Context, name string, id uuid.UUID) error {
	hh, err := d.householdID(ctx, d.conn(), name)
	if err != nil {
		return err
	}
	tag, err := d.conn().Exec(ctx, `DELETE FROM household_policies WHERE id = $1 AND household_id = $2`, id, hh)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("policy %s of %q: %w", id, name, ErrNotFound)
	}
	return err
}
