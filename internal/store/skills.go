package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pgvector/pgvector-go"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/steward"
)

// Skills: the owner's installed and staged skills (files, hash, version, source, scan,
// enabled), the owner's switches of the built-in ones and the uses of skills recorded on
// turns (docs/ARCHITECTURE.md §16).

// SkillText is one file of a stored skill with its text.
type SkillText struct {
	steward.SkillFile
	Text string `json:"text"`
}

// StoredSkill is a skill's row: what the owner sees and, when read whole, its files' texts.
type StoredSkill struct {
	steward.Skill
	Texts  []SkillText
	TurnID *uuid.UUID
	CallID string
}

// NewSkill is a skill to store: staged, or installed at once (Status).
type NewSkill struct {
	Skill     steward.Skill
	Texts     []SkillText
	Embedding []float32 // nil: found by keyword only
	TurnID    *uuid.UUID
	CallID    string
}

// Create stores a skill and returns its id and creation time; a second installed skill of
// one name is ErrConflict.
func (t Skills) Create(ctx context.Context, s NewSkill) (uuid.UUID, time.Time, error) {
	files, err := json.Marshal(s.Texts)
	if err != nil {
		return uuid.Nil, time.Time{}, fmt.Errorf("encode skill files: %w", err)
	}
	findings, err := json.Marshal(orEmpty(s.Skill.Findings))
	if err != nil {
		return uuid.Nil, time.Time{}, fmt.Errorf("encode skill findings: %w", err)
	}
	p := db.CreateSkillParams{OwnerID: t.ownerID, Name: s.Skill.Name, Description: s.Skill.Description, Version: s.Skill.Version,
		RiskLevel: s.Skill.RiskLevel, Triggers: orEmpty(s.Skill.Triggers), RequiredTools: orEmpty(s.Skill.RequiredTools),
		Origin: s.Skill.Origin, Source: s.Skill.Source, Status: s.Skill.Status, Enabled: s.Skill.Enabled, Sha256: s.Skill.SHA256,
		Files: files, Findings: findings, Worst: int16(s.Skill.Worst), TurnID: nullUUID(s.TurnID), CallID: ptrString(s.CallID)}
	if s.Embedding != nil {
		v := pgvector.NewVector(s.Embedding)
		p.Embedding = &v
	}
	row, err := t.q.CreateSkill(ctx, p)
	if err != nil {
		return uuid.Nil, time.Time{}, notFound("store skill", err)
	}
	return row.ID, row.CreatedAt, nil
}

// List returns the owner's skills, staged ones included, by name; files without texts.
func (t Skills) List(ctx context.Context, limit int) ([]StoredSkill, error) {
	rows, err := t.q.ListSkills(ctx, db.ListSkillsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	out := make([]StoredSkill, len(rows))
	for i, r := range rows {
		if out[i], err = toStoredSkill(skillRow(r)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Get returns one skill whole; ErrNotFound when the owner has none with that id.
func (t Skills) Get(ctx context.Context, id uuid.UUID) (StoredSkill, error) {
	r, err := t.q.GetSkill(ctx, db.GetSkillParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return StoredSkill{}, notFound("get skill", err)
	}
	return toStoredSkill(skillRow(r))
}

// ByName returns the installed skill called name whole; ErrNotFound when there is none.
func (t Skills) ByName(ctx context.Context, name string) (StoredSkill, error) {
	r, err := t.q.GetSkillByName(ctx, db.GetSkillByNameParams{OwnerID: t.ownerID, Name: name})
	if err != nil {
		return StoredSkill{}, notFound("get skill", err)
	}
	return toStoredSkill(skillRow(r))
}

// ForCall returns the skill staged for one call of a turn (install_skill); ErrNotFound
// when there is none.
func (t Skills) ForCall(ctx context.Context, turnID uuid.UUID, callID string) (StoredSkill, error) {
	r, err := t.q.GetStagedSkillForCall(ctx, db.GetStagedSkillForCallParams{OwnerID: t.ownerID, TurnID: nullUUID(&turnID), CallID: &callID})
	if err != nil {
		return StoredSkill{}, notFound("get staged skill", err)
	}
	return toStoredSkill(skillRow(r))
}

// Activate installs a staged skill with status (active or blocked) and enabled, replacing
// the installed skill of the same name; ErrNotFound when it is not staged (any more).
func (t Skills) Activate(ctx context.Context, id uuid.UUID, name, status string, enabled bool) error {
	if _, err := t.q.DeleteInstalledSkillNamed(ctx, db.DeleteInstalledSkillNamedParams{OwnerID: t.ownerID, Name: name, Keep: id}); err != nil {
		return notFound("replace skill", err)
	}
	n, err := t.q.ActivateSkill(ctx, db.ActivateSkillParams{OwnerID: t.ownerID, ID: id, Status: status, Enabled: enabled})
	return rowsOrNotFound("install skill", n, err)
}

// SetEnabled turns an installed skill on or off; ErrNotFound for no such installed skill.
func (t Skills) SetEnabled(ctx context.Context, id uuid.UUID, enabled bool) error {
	n, err := t.q.SetSkillEnabled(ctx, db.SetSkillEnabledParams{OwnerID: t.ownerID, ID: id, Enabled: enabled})
	return rowsOrNotFound("set skill", n, err)
}

// Override lets a blocked skill run despite its findings, at at, and enables it;
// ErrNotFound for no such blocked skill.
func (t Skills) Override(ctx context.Context, id uuid.UUID, at time.Time) error {
	n, err := t.q.OverrideSkill(ctx, db.OverrideSkillParams{OwnerID: t.ownerID, ID: id, At: &at})
	return rowsOrNotFound("override skill", n, err)
}

// Delete deletes a skill; ErrNotFound when there is none.
func (t Skills) Delete(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.DeleteSkill(ctx, db.DeleteSkillParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("delete skill", n, err)
}

// DropStaged deletes the skills staged before before that nobody installed.
func (t Skills) DropStaged(ctx context.Context, before time.Time) error {
	_, err := t.q.DeleteStaleStagedSkills(ctx, db.DeleteStaleStagedSkillsParams{OwnerID: t.ownerID, Before: before})
	return notFoundOrNil("drop staged skills", err)
}

// SkillDistance is a skill and how far its description is from a query, in cosine distance.
type SkillDistance struct {
	ID       uuid.UUID
	Distance float64
}

// Nearest returns the owner's usable skills nearest in meaning to query.
func (t Skills) Nearest(ctx context.Context, query []float32, limit int) ([]SkillDistance, error) {
	rows, err := t.q.NearestSkills(ctx, db.NearestSkillsParams{OwnerID: t.ownerID, Query: pgvector.NewVector(query), MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("nearest skills: %w", err)
	}
	out := make([]SkillDistance, len(rows))
	for i, r := range rows {
		out[i] = SkillDistance{ID: r.ID, Distance: r.Distance}
	}
	return out, nil
}

// List returns the owner's switches of built-in skills, by name.
func (t SkillSettings) List(ctx context.Context) (map[string]bool, error) {
	rows, err := t.q.ListSkillSettings(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("skill settings: %w", err)
	}
	out := make(map[string]bool, len(rows))
	for _, r := range rows {
		out[r.Name] = r.Enabled
	}
	return out, nil
}

// Set stores the owner's switch of the built-in skill called name.
func (t SkillSettings) Set(ctx context.Context, name string, enabled bool) error {
	return notFoundOrNil("set built-in skill", t.q.SetSkillSetting(ctx, db.SetSkillSettingParams{OwnerID: t.ownerID, Name: name, Enabled: enabled}))
}

// Uses returns the owner's latest uses of skills, newest first.
func (t Skills) Uses(ctx context.Context, limit int) ([]steward.SkillUse, error) {
	rows, err := t.q.ListSkillUses(ctx, db.ListSkillUsesParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("skill uses: %w", err)
	}
	out := make([]steward.SkillUse, 0, len(rows))
	for _, r := range rows {
		var u steward.SkillUse
		if err := json.Unmarshal(r.Data, &u); err != nil {
			continue // an event this reader does not know
		}
		if r.TurnID.Valid {
			u.TurnID = r.TurnID.UUID
		}
		u.At = r.CreatedAt
		var m steward.Message
		if json.Unmarshal(r.Asked, &m) == nil {
			var words []string
			for _, p := range m.Parts {
				if !p.Context && p.Text != "" {
					words = append(words, p.Text)
				}
			}
			u.Asked = strings.Join(words, " ")
		}
		out = append(out, u)
	}
	return out, nil
}

// skillRow is the columns every skill query returns.
type skillRow = db.GetSkillRow

func toStoredSkill(r skillRow) (StoredSkill, error) {
	s := StoredSkill{Skill: steward.Skill{ID: r.ID.String(), Name: r.Name, Description: r.Description, Version: r.Version,
		RiskLevel: r.RiskLevel, Triggers: r.Triggers, RequiredTools: r.RequiredTools, Origin: r.Origin, Source: r.Source,
		Status: r.Status, Enabled: r.Enabled, SHA256: r.Sha256, Worst: steward.Severity(r.Worst), OverriddenAt: r.OverriddenAt,
		CreatedAt: r.CreatedAt}, TurnID: ptrUUID(r.TurnID)}
	if r.CallID != nil {
		s.CallID = *r.CallID
	}
	if err := json.Unmarshal(r.Files, &s.Texts); err != nil {
		return StoredSkill{}, fmt.Errorf("decode skill files: %w", err)
	}
	s.Files = make([]steward.SkillFile, len(s.Texts))
	for i, f := range s.Texts {
		s.Files[i] = f.SkillFile
	}
	if err := json.Unmarshal(r.Findings, &s.Findings); err != nil {
		return StoredSkill{}, fmt.Errorf("decode skill findings: %w", err)
	}
	return s, nil
}

// orEmpty is s, or an empty slice for nil (a NOT NULL array or JSON list).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
