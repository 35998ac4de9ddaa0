package skills

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/skillpack"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// BuiltinPrefix starts a built-in skill's id: "builtin:meeting-notes".
const BuiltinPrefix = "builtin:"

// builtinSkill is a built-in as the owner sees it, with the owner's switch.
func builtinSkill(sk skillpack.Skill, enabled bool) steward.Skill {
	m := sk.Manifest
	return steward.Skill{ID: BuiltinPrefix + m.Name, Name: m.Name, Description: m.Description, Version: m.Version,
		RiskLevel: m.RiskLevel, Triggers: m.Triggers, RequiredTools: m.RequiredTools, Origin: steward.SkillBuiltin,
		Source: "built in", Status: steward.SkillActive, Enabled: enabled, SHA256: sk.Hash(), Files: sk.Listing(),
		Findings: []steward.SkillFinding{}}
}

// Overview is the Skills page: every skill, built-ins first, and the latest uses.
type Overview struct {
	Skills []steward.Skill    `json:"skills"`
	Uses   []steward.SkillUse `json:"uses"`
}

// List returns the owner's skills — the built-ins with the owner's switch, then the owner's
// own by name, staged ones included — and the latest uses of skills.
func (s *Service) List(ctx context.Context, ownerID uuid.UUID) (Overview, error) {
	var out Overview
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		settings, err := tx.SkillSettings.List(ctx)
		if err != nil {
			return err
		}
		for _, b := range skillpack.Builtins() {
			on, set := settings[b.Manifest.Name]
			out.Skills = append(out.Skills, builtinSkill(b, on || !set))
		}
		own, err := tx.Skills.List(ctx, maxSkills)
		if err != nil {
			return err
		}
		for _, sk := range own {
			out.Skills = append(out.Skills, sk.Skill)
		}
		out.Uses, err = tx.Skills.Uses(ctx, 50)
		return err
	})
	if out.Uses == nil {
		out.Uses = []steward.SkillUse{}
	}
	return out, err
}

// Get returns one skill by id ("builtin:<name>" or a UUID).
func (s *Service) Get(ctx context.Context, ownerID uuid.UUID, id string) (steward.Skill, error) {
	var out steward.Skill
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		sk, _, err := s.resolve(ctx, tx, id, false)
		out = sk.Skill
		return err
	})
	return out, err
}

// resolve finds the skill id names: "builtin:<name>", a UUID, or a name (a built-in's
// first, then the owner's installed skill). usable asks for one the model may use.
func (s *Service) resolve(ctx context.Context, tx *store.Tx, id string, usable bool) (store.StoredSkill, *skillpack.Skill, error) {
	id = strings.TrimSpace(id)
	name, isBuiltin := strings.CutPrefix(id, BuiltinPrefix)
	if b, ok := skillpack.Builtin(name); ok {
		settings, err := tx.SkillSettings.List(ctx)
		if err != nil {
			return store.StoredSkill{}, nil, err
		}
		on, set := settings[name]
		sk := store.StoredSkill{Skill: builtinSkill(b, on || !set)}
		if usable && !sk.Enabled {
			return sk, nil, steward.Errorf(steward.CodeNotFound, "the built-in skill %s is turned off", name)
		}
		return sk, &b, nil
	}
	if isBuiltin {
		return store.StoredSkill{}, nil, steward.Errorf(steward.CodeNotFound, "no built-in skill %q", clip(name, 64))
	}
	var sk store.StoredSkill
	var err error
	if uid, perr := uuid.Parse(id); perr == nil {
		sk, err = tx.Skills.Get(ctx, uid)
	} else {
		sk, err = tx.Skills.ByName(ctx, strings.ToLower(id))
	}
	if err != nil {
		return sk, nil, notFoundAs(err, "no skill %q", clip(id, 64))
	}
	if usable && !sk.Usable() {
		return sk, nil, steward.Errorf(steward.CodeNotFound, "the skill %s is %s", sk.Name, unusable(sk.Skill))
	}
	return sk, nil, nil
}

// unusable says why a skill cannot be used.
func unusable(sk steward.Skill) string {
	switch {
	case sk.Status == steward.SkillStaged:
		return "not installed yet"
	case sk.Status == steward.SkillBlocked && sk.OverriddenAt == nil:
		return "blocked by its scan until the owner overrides it"
	}
	return "turned off"
}

// SetEnabled turns a skill on or off: a built-in by the owner's switch, the owner's by its
// row. A blocked skill is turned on only by Override.
func (s *Service) SetEnabled(ctx context.Context, ownerID uuid.UUID, id string, on bool) (steward.Skill, error) {
	var out steward.Skill
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		sk, b, err := s.resolve(ctx, tx, id, false)
		if err != nil {
			return err
		}
		switch {
		case b != nil:
			if err := tx.SkillSettings.Set(ctx, b.Manifest.Name, on); err != nil {
				return err
			}
		case sk.Status == steward.SkillStaged:
			return steward.Errorf(steward.CodeConflict, "the skill %s is not installed yet; install it first", sk.Name)
		case on && sk.Status == steward.SkillBlocked && sk.OverriddenAt == nil:
			return steward.Errorf(steward.CodeConflict, "the skill %s is blocked by its scan (worst finding %s); read the findings and override it to turn it on", sk.Name, sk.Worst)
		default:
			if err := tx.Skills.SetEnabled(ctx, uuid.MustParse(sk.ID), on); err != nil {
				return err
			}
		}
		sk.Enabled = on
		out = sk.Skill
		return nil
	})
	return out, err
}

// Override lets a blocked skill run despite its findings and turns it on; the audit log
// records who decided (the owner, through by: "web", "api", "cli"). The gate is unchanged:
// whatever its playbook says, a write still waits for the owner (§2).
func (s *Service) Override(ctx context.Context, ownerID, id uuid.UUID, by string) (steward.Skill, error) {
	var out steward.Skill
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		sk, err := tx.Skills.Get(ctx, id)
		if err != nil {
			return err
		}
		if sk.Status != steward.SkillBlocked {
			return steward.Errorf(steward.CodeConflict, "the skill %s is %s, not blocked: there is nothing to override", sk.Name, sk.Status)
		}
		now := s.Now.Now()
		if err := tx.Skills.Override(ctx, id, now); err != nil {
			return err
		}
		data, _ := json.Marshal(map[string]any{"skill_id": sk.ID, "name": sk.Name, "sha256": sk.SHA256, "worst": sk.Worst,
			"findings": len(sk.Findings), "by": by})
		if err := tx.Journal.AppendEvents(ctx, nil, []steward.NewEvent{{Kind: "skill_override", Data: data}}); err != nil {
			return err
		}
		sk.OverriddenAt, sk.Enabled = &now, true
		out = sk.Skill
		return nil
	})
	return out, notFoundAs(err, "no skill with id %s", id)
}

// Delete deletes one of the owner's skills (a staged one: discards it); a built-in cannot be
// deleted, only turned off.
func (s *Service) Delete(ctx context.Context, ownerID uuid.UUID, id string) error {
	if _, ok := skillpack.Builtin(strings.TrimPrefix(id, BuiltinPrefix)); ok {
		return steward.Errorf(steward.CodeInvalid, "a built-in skill cannot be removed; turn it off instead")
	}
	uid, err := uuid.Parse(id)
	if err != nil {
		return steward.Errorf(steward.CodeNotFound, "no skill %q", clip(id, 64))
	}
	return notFoundAs(s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error { return tx.Skills.Delete(ctx, uid) }),
		"no skill with id %s", uid)
}

// Use returns the playbook of a usable skill for use_skill: SKILL.md's body and the
// reference files, trusted when the skill is a built-in or the owner's own.
func (s *Service) Use(ctx context.Context, ownerID uuid.UUID, id string) (steward.Playbook, error) {
	var out steward.Playbook
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		sk, b, err := s.resolve(ctx, tx, id, true)
		if err != nil {
			return err
		}
		out = steward.Playbook{SkillID: sk.ID, Name: sk.Name, Version: sk.Version, Origin: sk.Origin,
			Trusted: sk.Origin == steward.SkillBuiltin || sk.Origin == steward.SkillOwn}
		if b != nil {
			out.Text, out.References = b.Body, b.References()
			return nil
		}
		files := make([]skillpack.File, len(sk.Texts))
		for i, f := range sk.Texts {
			files[i] = skillpack.File{Path: f.Path, Text: f.Text}
		}
		pack, err := skillpack.FromFiles(files)
		if err != nil {
			return err
		}
		out.Text, out.References = pack.Body, pack.References()
		return nil
	})
	return out, err
}

// Find ranks the owner's usable skills and the enabled built-ins against query, by keyword
// (name, description, triggers) and by meaning (the description's embedding: pgvector for
// the owner's, the same embedder for the built-ins), best first, at most max.
func (s *Service) Find(ctx context.Context, ownerID uuid.UUID, query string, max int) ([]steward.SkillMatch, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, steward.Errorf(steward.CodeInvalid, "the query is empty")
	}
	vec := s.embed(ctx, query)
	builtinVecs := s.builtinVectors(ctx)
	var cands []candidate
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		settings, err := tx.SkillSettings.List(ctx)
		if err != nil {
			return err
		}
		for _, b := range skillpack.Builtins() {
			if on, set := settings[b.Manifest.Name]; set && !on {
				continue
			}
			c := candidate{skill: builtinSkill(b, true)}
			if v, ok := builtinVecs[b.Manifest.Name]; ok && vec != nil {
				c.meaning = cosine(vec, v)
			}
			cands = append(cands, c)
		}
		own, err := tx.Skills.List(ctx, maxSkills)
		if err != nil {
			return err
		}
		near := map[string]float64{}
		if vec != nil {
			ds, err := tx.Skills.Nearest(ctx, vec, maxSkills)
			if err != nil {
				return err
			}
			for _, d := range ds {
				near[d.ID.String()] = 1 - d.Distance
			}
		}
		for _, sk := range own {
			if sk.Usable() {
				cands = append(cands, candidate{skill: sk.Skill, meaning: near[sk.ID]})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rank(query, cands, max), nil
}

// candidate is a skill find_skill may return, with its similarity of meaning to the query.
type candidate struct {
	skill   steward.Skill
	meaning float64
}

// rank scores each candidate: the share of the query's words found in its name,
// description and triggers, a trigger phrase the query contains, and its similarity of
// meaning; those with neither a word nor a close meaning are left out.
func rank(query string, cands []candidate, max int) []steward.SkillMatch {
	q := strings.ToLower(query)
	words := keywords(q)
	var out []steward.SkillMatch
	for _, c := range cands {
		sk := c.skill
		hay := strings.ToLower(strings.ReplaceAll(sk.Name, "-", " ") + " " + sk.Description + " " + strings.Join(sk.Triggers, " "))
		hits := 0
		for _, w := range words {
			if strings.Contains(hay, w) {
				hits++
			}
		}
		kw := 0.0
		if len(words) > 0 {
			kw = float64(hits) / float64(len(words))
		}
		for _, t := range append([]string{strings.ReplaceAll(sk.Name, "-", " ")}, sk.Triggers...) {
			if t = strings.ToLower(strings.TrimSpace(t)); t != "" && strings.Contains(q, t) {
				kw += 1
				break
			}
		}
		if hits == 0 && c.meaning < 0.5 {
			continue
		}
		score := math.Round((0.7*kw+0.3*math.Max(c.meaning, 0))*1000) / 1000
		out = append(out, steward.SkillMatch{ID: sk.ID, Name: sk.Name, Description: sk.Description, RiskLevel: sk.RiskLevel,
			Origin: sk.Origin, Score: score})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// stopwords are left out of a query's keywords.
var stopwords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "this": true, "that": true, "skill": true,
	"use": true, "my": true, "me": true, "please": true, "can": true, "you": true, "what": true, "how": true, "on": true}

// keywords are a query's words of three letters or more, without stopwords.
func keywords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127) }) {
		if len([]rune(w)) >= 3 && !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

// cosine is the cosine similarity of two vectors of one length.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// vectors are the built-ins' description embeddings, made once per process.
type vectors struct {
	mu   sync.Mutex
	vecs map[string][]float32
}

// builtinVectors embeds the built-ins' descriptions once (a failure is tried again on the
// next find).
func (s *Service) builtinVectors(ctx context.Context) map[string][]float32 {
	s.builtinVecs.mu.Lock()
	defer s.builtinVecs.mu.Unlock()
	if s.builtinVecs.vecs != nil || s.Embedder == nil {
		return s.builtinVecs.vecs
	}
	bs := skillpack.Builtins()
	texts := make([]string, len(bs))
	for i, b := range bs {
		texts[i] = b.Manifest.Name + ": " + b.Manifest.Description
	}
	vs, err := s.Embedder.Embed(ctx, texts)
	if err != nil || len(vs) != len(bs) {
		s.Logger.Warn().Err(err).Msg("skill: embedding the built-ins failed; found by keyword only")
		return nil
	}
	s.builtinVecs.vecs = make(map[string][]float32, len(bs))
	for i, b := range bs {
		s.builtinVecs.vecs[b.Manifest.Name] = vs[i]
	}
	return s.builtinVecs.vecs
}
