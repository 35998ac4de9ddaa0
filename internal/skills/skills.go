// Package skills is the owner's skills service (docs/ARCHITECTURE.md §16, docs/SKILLS.md):
// stage a skill from an upload, a document or an HTTPS URL (read and scanned by
// internal/skillpack, fetched through the egress guard with size and time limits), install
// it only on the owner's yes — blocked while a finding at or above high stands, until the
// owner overrides it (audited) —, list, switch on and off (built-ins too), delete, and for
// the skill tools find a skill by keyword and meaning and hand over its playbook. It
// implements skilltools.Skills; the faces call it directly.
package skills

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/skillpack"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Bounds.
const (
	// FetchTimeout bounds downloading a skill's archive.
	FetchTimeout = 20 * time.Second
	// StagedTTL is how long a staged skill nobody installed is kept.
	StagedTTL = 24 * time.Hour
	// maxSkills bounds the skills an owner lists and keeps.
	maxSkills = 200
	// MaxURL bounds a skill's URL.
	MaxURL = 2048
)

// Embedder embeds descriptions and queries (the memory embedder, §7).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Documents reads a stored document's text (internal/document), for a skill that is a
// document.
type Documents interface {
	Read(ctx context.Context, ownerID, id uuid.UUID, offset, maxChars int) (steward.DocumentText, error)
}

// Service is the owner's skills.
type Service struct {
	Store *store.Store
	// Embedder ranks find_skill by meaning; nil: by keyword only.
	Embedder Embedder
	// Client fetches a skill's URL: the egress guard's client (§8).
	Client *http.Client
	// Documents reads a skill given as a document; nil: none can be.
	Documents Documents
	Logger    zerolog.Logger
	Now       steward.Clock

	builtinVecs vectors
}

// Source is where a skill comes from: an uploaded archive or SKILL.md (Archive, FileName),
// an HTTPS URL, or one of the owner's documents. Own says the owner wrote it: its playbook
// is then instructions, not data (§3); only a face sets it, never the model.
type Source struct {
	Archive  []byte
	FileName string
	// Dir is a folder holding SKILL.md (steward skills add PATH).
	Dir        fs.FS
	URL        string
	DocumentID uuid.UUID
	Own        bool
}

// describe is the source as stored.
func (src Source) describe() string {
	switch {
	case src.URL != "":
		return src.URL
	case src.DocumentID != uuid.Nil:
		return "document:" + src.DocumentID.String()
	case src.FileName != "":
		return "upload:" + clip(path.Base(src.FileName), 200)
	}
	return "upload"
}

// invalid is a client error in words.
func invalid(format string, a ...any) error { return steward.Errorf(steward.CodeInvalid, format, a...) }

// load reads the skill src names and checks it (skillpack): fetched through the egress
// guard, read from a document, or the upload's bytes.
func (s *Service) load(ctx context.Context, ownerID uuid.UUID, src Source) (skillpack.Skill, error) {
	var sk skillpack.Skill
	var err error
	switch {
	case src.URL != "":
		var data []byte
		if data, err = s.fetch(ctx, src.URL); err != nil {
			return sk, err
		}
		sk, err = skillpack.Read(data, src.URL)
	case src.DocumentID != uuid.Nil:
		if s.Documents == nil {
			return sk, invalid("documents are not configured on this server")
		}
		var text string
		if text, err = s.documentText(ctx, ownerID, src.DocumentID); err != nil {
			return sk, err
		}
		sk, err = skillpack.FromMarkdown(text)
	case len(src.Archive) > 0:
		sk, err = skillpack.Read(src.Archive, src.FileName)
	case src.Dir != nil:
		sk, err = skillpack.ReadDir(src.Dir)
	default:
		return sk, invalid("give a skill: a file (zip, tar.gz or SKILL.md), an https URL or a document id")
	}
	if e := (*skillpack.Error)(nil); errors.As(err, &e) {
		return sk, &steward.Error{Code: steward.CodeInvalid, Reason: e.Reason, Message: e.Error()}
	}
	if err != nil {
		return sk, err
	}
	if _, ok := skillpack.Builtin(sk.Manifest.Name); ok {
		return sk, invalid("the name %q belongs to a built-in skill; give yours another name", sk.Manifest.Name)
	}
	return sk, nil
}

// documentPage is how many characters a document is read at a time (the document service's
// largest page).
const documentPage = 100_000

// documentText reads a document's whole text, page by page, refusing one longer than a
// SKILL.md may be.
func (s *Service) documentText(ctx context.Context, ownerID, id uuid.UUID) (string, error) {
	var b strings.Builder
	for offset := 0; ; {
		page, err := s.Documents.Read(ctx, ownerID, id, offset, documentPage)
		switch {
		case errors.Is(err, steward.ErrNotFound):
			return "", steward.Errorf(steward.CodeNotFound, "no document with id %s", id)
		case err != nil:
			return "", err
		}
		b.WriteString(page.Text)
		if b.Len() > skillpack.MaxFileBytes {
			return "", invalid("the document is over %d KB: too long for a SKILL.md", skillpack.MaxFileBytes>>10)
		}
		if page.NextOffset == 0 {
			return b.String(), nil
		}
		offset = page.NextOffset
	}
}

// fetch downloads an archive over HTTPS through the egress guard, at most
// skillpack.MaxArchiveBytes and FetchTimeout.
func (s *Service) fetch(ctx context.Context, raw string) ([]byte, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case len(raw) > MaxURL:
		return nil, invalid("the URL is over %d characters", MaxURL)
	case err != nil || u.Host == "":
		return nil, invalid("%q is not a URL", clip(raw, 100))
	case u.Scheme != "https":
		return nil, invalid("a skill is fetched over https only")
	case s.Client == nil:
		return nil, invalid("fetching skills is not configured on this server")
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, invalid("%q is not a URL", clip(raw, 100))
	}
	res, err := s.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, invalid("fetching the skill took over %s", FetchTimeout)
		}
		return nil, invalid("the skill could not be fetched: %s", errorWords(err))
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, invalid("the skill's URL answered %s", res.Status)
	}
	if res.ContentLength > skillpack.MaxArchiveBytes {
		return nil, invalid("the skill is over %d KB", skillpack.MaxArchiveBytes>>10)
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, skillpack.MaxArchiveBytes+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, invalid("fetching the skill took over %s", FetchTimeout)
	case err != nil:
		return nil, invalid("the skill could not be fetched: %s", errorWords(err))
	case len(data) > skillpack.MaxArchiveBytes:
		return nil, invalid("the skill is over %d KB", skillpack.MaxArchiveBytes>>10)
	}
	return data, nil
}

// errorWords is a fetch error without Go's "Get \"url\":" prefix.
func errorWords(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return clip(err.Error(), 200)
}

// Stage reads, checks and scans the skill src names and stores it staged — not yet
// installed, never offered to the model — for the owner's yes (Install, or an approved
// install_skill call of turnID's callID).
func (s *Service) Stage(ctx context.Context, ownerID uuid.UUID, src Source, turnID *uuid.UUID, callID string) (steward.Skill, error) {
	sk, err := s.load(ctx, ownerID, src)
	if err != nil {
		return steward.Skill{}, err
	}
	findings, worst := skillpack.Scan(sk)
	origin := steward.SkillOutside
	if src.Own {
		origin = steward.SkillOwn
	}
	m := sk.Manifest
	out := steward.Skill{Name: m.Name, Description: m.Description, Version: m.Version, RiskLevel: m.RiskLevel,
		Triggers: m.Triggers, RequiredTools: m.RequiredTools, Origin: origin, Source: src.describe(), Status: steward.SkillStaged,
		SHA256: sk.Hash(), Files: sk.Listing(), Findings: findings, Worst: worst}
	texts := make([]store.SkillText, len(sk.Files))
	for i, f := range sk.Files {
		texts[i] = store.SkillText{SkillFile: out.Files[i], Text: f.Text}
	}
	// Embedded before the transaction (§2): a failed embedding leaves keyword search.
	vec := s.embed(ctx, m.Name+": "+m.Description)
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if err := tx.Skills.DropStaged(ctx, s.Now.Now().Add(-StagedTTL)); err != nil {
			return err
		}
		list, err := tx.Skills.List(ctx, maxSkills+1)
		if err != nil {
			return err
		}
		if len(list) >= maxSkills {
			return invalid("you have %d skills; remove some first", len(list))
		}
		id, at, err := tx.Skills.Create(ctx, store.NewSkill{Skill: out, Texts: texts, Embedding: vec, TurnID: turnID, CallID: callID})
		out.ID, out.CreatedAt = id.String(), at
		return err
	})
	if errors.Is(err, steward.ErrConflict) {
		return steward.Skill{}, steward.Errorf(steward.CodeConflict, "this call already staged a skill")
	}
	return out, err
}

// embed embeds one text, or returns nil (logged) when it cannot.
func (s *Service) embed(ctx context.Context, text string) []float32 {
	if s.Embedder == nil {
		return nil
	}
	vs, err := s.Embedder.Embed(ctx, []string{text})
	if err != nil || len(vs) != 1 {
		s.Logger.Warn().Err(err).Msg("skill: embedding failed; found by keyword only")
		return nil
	}
	return vs[0]
}

// Install installs a staged skill on the owner's yes: active, or blocked while a finding at
// or above high stands (Override lets it run). An installed skill of the same name is
// replaced.
func (s *Service) Install(ctx context.Context, ownerID, id uuid.UUID) (steward.Skill, error) {
	var out steward.Skill
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		sk, err := tx.Skills.Get(ctx, id)
		if err != nil {
			return err
		}
		if sk.Status != steward.SkillStaged {
			return steward.Errorf(steward.CodeConflict, "the skill %s is already installed", sk.Name)
		}
		out, err = activate(ctx, tx, sk)
		return err
	})
	return out, notFoundAs(err, "no staged skill with id %s", id)
}

// activate installs sk (staged): blocked and off at or above high, else active and on.
func activate(ctx context.Context, tx *store.Tx, sk store.StoredSkill) (steward.Skill, error) {
	status, enabled := steward.SkillActive, true
	if sk.Worst >= steward.SeverityHigh {
		status, enabled = steward.SkillBlocked, false
	}
	if err := tx.Skills.Activate(ctx, uuid.MustParse(sk.ID), sk.Name, status, enabled); err != nil {
		return steward.Skill{}, err
	}
	sk.Status, sk.Enabled = status, enabled
	return sk.Skill, nil
}

// InstallCall is an approved install_skill call: the skill its preview staged for the call,
// or, when none was (a tainted turn fetches only once approved), the skill src names, staged
// now; then installed as Install does. What the owner approved is what is installed: the
// staged row is the one the card showed.
func (s *Service) InstallCall(ctx context.Context, ownerID, turnID uuid.UUID, callID, url string, documentID uuid.UUID) (steward.Skill, error) {
	// Whatever the model says, a skill it installs came from outside.
	src := Source{URL: url, DocumentID: documentID}
	var staged bool
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		_, err := tx.Skills.ForCall(ctx, turnID, callID)
		staged = err == nil
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return steward.Skill{}, err
	}
	if !staged {
		if _, err := s.Stage(ctx, ownerID, src, &turnID, callID); err != nil {
			return steward.Skill{}, err
		}
	}
	var out steward.Skill
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		sk, err := tx.Skills.ForCall(ctx, turnID, callID)
		if err != nil {
			return err
		}
		if sk.Status != steward.SkillStaged {
			return steward.Errorf(steward.CodeConflict, "the skill %s is already installed", sk.Name)
		}
		out, err = activate(ctx, tx, sk)
		return err
	})
	return out, notFoundAs(err, "the skill staged for this call is gone (discarded, or staged over %s ago)", StagedTTL)
}

// Preview stages the skill of an install_skill call before the owner is asked, and words
// what the approval card shows: name, version, description, source, files, scan.
func (s *Service) Preview(ctx context.Context, ownerID, turnID uuid.UUID, callID, url string, documentID uuid.UUID) (string, error) {
	src := Source{URL: url, DocumentID: documentID}
	var existing *store.StoredSkill
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		sk, err := tx.Skills.ForCall(ctx, turnID, callID)
		if err == nil {
			existing = &sk
			return nil
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if existing != nil {
		return Card(existing.Skill), nil
	}
	sk, err := s.Stage(ctx, ownerID, src, &turnID, callID)
	if err != nil {
		return "", err
	}
	return Card(sk), nil
}

// Card words a staged skill for an approval card, one fact a line.
func Card(sk steward.Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill: %s", sk.Name)
	if sk.Version != "" {
		fmt.Fprintf(&b, " (version %s)", sk.Version)
	}
	fmt.Fprintf(&b, "\nDescription: %s\nRisk level: %s\nFrom: %s\nFiles:", clip(sk.Description, 300), sk.RiskLevel, clip(sk.Source, 200))
	for i, f := range sk.Files {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s (%s)", f.Path, size(f.Size))
	}
	b.WriteString("\n")
	b.WriteString(ScanWords(sk))
	return steward.Visible(b.String())
}

// ScanWords is the scan's outcome in words, with its findings one a line.
func ScanWords(sk steward.Skill) string {
	if len(sk.Findings) == 0 {
		return "Scan: no findings."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Scan: %d finding(s), the worst %s.", len(sk.Findings), sk.Worst)
	if sk.Worst >= steward.SeverityHigh {
		b.WriteString(" Installed, it stays blocked until you override it in Skills (web app or steward skills enable --override).")
	}
	for i, f := range sk.Findings {
		if i == 8 {
			fmt.Fprintf(&b, "\n… and %d more", len(sk.Findings)-i)
			break
		}
		fmt.Fprintf(&b, "\n- %s %s in %s line %d: %s (“%s”)", f.Severity, f.Rule, f.Path, f.Line, f.Why, clip(f.Excerpt, 80))
	}
	return b.String()
}

// size words a byte count.
func size(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

// notFoundAs turns the store's not-found into a client's not_found in words.
func notFoundAs(err error, format string, a ...any) error {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, steward.ErrNotFound) {
		return steward.Errorf(steward.CodeNotFound, format, a...)
	}
	return err
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
