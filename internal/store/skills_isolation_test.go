package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	. "github.com/stewardhq/steward/internal/store"
)

// seedSkill gives an owner a skill staged for the call "skill-call" of turn, installed
// blocked and overridden, and a built-in turned off (seed's one audit event is a skill's use).
func seedSkill(ctx context.Context, tx *Tx, name string, turn uuid.UUID, vec []float32) (uuid.UUID, error) {
	sk := steward.Skill{Name: "skill-" + name, Description: "the skill of " + name, RiskLevel: "low", Origin: steward.SkillOutside,
		Source: "upload", Status: steward.SkillStaged, SHA256: "h", Worst: steward.SeverityHigh,
		Findings: []steward.SkillFinding{{Rule: "secret", Severity: steward.SeverityHigh, Path: "SKILL.md", Line: 1}}}
	id, _, err := tx.Skills.Create(ctx, NewSkill{Skill: sk, Texts: []SkillText{{SkillFile: steward.SkillFile{Path: "SKILL.md", Size: 4}, Text: "body"}},
		Embedding: vec, TurnID: &turn, CallID: "skill-call"})
	if err != nil {
		return uuid.Nil, err
	}
	if err := tx.Skills.Activate(ctx, id, sk.Name, steward.SkillBlocked, false); err != nil {
		return uuid.Nil, err
	}
	if err := tx.Skills.Override(ctx, id, time.Now()); err != nil {
		return uuid.Nil, err
	}
	if err := tx.SkillSettings.Set(ctx, "weekly-review", false); err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

// probeSkills: bob lists, reads, finds, installs, switches and deletes none of alice's skills.
func probeSkills(t *testing.T, ctx context.Context, tx *Tx, a seeded, none func(string, int, error), refused func(string, error)) {
	t.Helper()
	list, err := tx.Skills.List(ctx, 100)
	none("skills list", len(list), err)
	_, err = tx.Skills.Get(ctx, a.skill)
	refused("skills get", err)
	_, err = tx.Skills.ByName(ctx, "skill-"+a.owner.Name)
	refused("skills by name", err)
	_, err = tx.Skills.ForCall(ctx, a.turn, "skill-call")
	refused("skills for call", err)
	refused("skills activate", tx.Skills.Activate(ctx, a.skill, "skill-"+a.owner.Name, steward.SkillActive, true))
	refused("skills enable", tx.Skills.SetEnabled(ctx, a.skill, false))
	refused("skills override", tx.Skills.Override(ctx, a.skill, time.Now()))
	refused("skills delete", tx.Skills.Delete(ctx, a.skill))
	if err := tx.Skills.DropStaged(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Errorf("skills drop staged: %v", err)
	}
	near, err := tx.Skills.Nearest(ctx, a.vector, 10)
	none("skills nearest", len(near), err)
	if len(near) == 1 && near[0].ID == a.skill {
		t.Error("skills nearest returned alice's skill")
	}
	set, err := tx.SkillSettings.List(ctx)
	none("skill settings", len(set), err)
	if err := tx.SkillSettings.Set(ctx, "weekly-review", true); err != nil {
		t.Errorf("skills set built-in: %v", err)
	}
	uses, err := tx.Skills.Uses(ctx, 10)
	none("skill uses", len(uses), err)
	for _, u := range uses {
		if u.TurnID == a.turn {
			t.Errorf("skill uses: bob sees alice's use %+v", u)
		}
	}
}
