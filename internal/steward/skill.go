package steward

import (
	"time"

	"github.com/google/uuid"
)

// Skills are playbooks the agent finds and follows (docs/SKILLS.md, docs/ARCHITECTURE.md
// §16): a SKILL.md with front matter and optional reference files, built in or the owner's.

// Where a skill came from decides how its playbook reaches the model (§3): a built-in and a
// skill the owner says they wrote are instructions; any other is data, in a data block.
const (
	SkillBuiltin = "builtin"
	SkillOwn     = "owner"
	SkillOutside = "outside"
)

// A skill's status: staged (read and scanned, waiting for the owner's yes; find_skill and
// use_skill never see it), active (installed), blocked (installed, but a finding at or above
// high keeps it off until the owner overrides it).
const (
	SkillStaged  = "staged"
	SkillActive  = "active"
	SkillBlocked = "blocked"
)

// Severity grades a scanner finding; a finding at or above SeverityHigh blocks activation.
type Severity int

// Severities, lowest first.
const (
	SeverityNone Severity = iota
	SeverityInfo
	SeverityLow
	SeverityMedium
	SeverityHigh
	SeverityCritical
)

var severityNames = []string{"none", "info", "low", "medium", "high", "critical"}

// String is the severity's name ("high").
func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return "none"
	}
	return severityNames[s]
}

// ParseSeverity reads a severity's name; ok is false for an unknown one.
func ParseSeverity(name string) (Severity, bool) {
	for i, n := range severityNames {
		if n == name {
			return Severity(i), true
		}
	}
	return SeverityNone, false
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name; an unknown one is none.
func (s *Severity) UnmarshalText(b []byte) error {
	*s, _ = ParseSeverity(string(b))
	return nil
}

// SkillFinding is one thing the scanner found in a skill's files.
type SkillFinding struct {
	// Rule names what was found: prompt_injection, role_hijack, safety_bypass,
	// exfiltration, hidden_text, script, secret.
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Path is the file, Line its line (1-based).
	Path string `json:"path"`
	Line int    `json:"line"`
	// Excerpt is what matched, cut short, its invisible characters shown (Visible).
	Excerpt string `json:"excerpt"`
	// Why says, in words, why it matters.
	Why string `json:"why"`
}

// SkillFile is one file of a skill: its path inside the skill, size and SHA-256.
type SkillFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size_bytes"`
	SHA256 string `json:"sha256"`
}

// Skill is a skill as the owner sees it.
type Skill struct {
	// ID is "builtin:<name>" for a built-in, else the row's UUID.
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	Version       string   `json:"version,omitempty"`
	RiskLevel     string   `json:"risk_level"`
	Triggers      []string `json:"triggers,omitempty"`
	RequiredTools []string `json:"required_tools,omitempty"`
	// Origin is SkillBuiltin, SkillOwn or SkillOutside; Source where it came from (an
	// upload's file name, a URL, "document:<id>").
	Origin string `json:"origin"`
	Source string `json:"source,omitempty"`
	// Status is SkillStaged, SkillActive or SkillBlocked; Enabled the owner's switch.
	Status  string `json:"status"`
	Enabled bool   `json:"enabled"`
	// SHA256 covers every file (skillpack.Skill.Hash); Files lists them.
	SHA256   string         `json:"sha256,omitempty"`
	Files    []SkillFile    `json:"files"`
	Findings []SkillFinding `json:"findings"`
	// Worst is the highest finding's severity (none without findings).
	Worst Severity `json:"worst"`
	// OverriddenAt is when the owner let a blocked skill run despite its findings.
	OverriddenAt *time.Time `json:"overridden_at,omitempty"`
	// CreatedAt is when the owner's skill was stored (none for a built-in).
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// Usable reports whether find_skill and use_skill may offer the skill: enabled, and active
// (or blocked and overridden by the owner).
func (s Skill) Usable() bool {
	return s.Enabled && (s.Status == SkillActive || s.Status == SkillBlocked && s.OverriddenAt != nil)
}

// SkillMatch is one of find_skill's ranked results.
type SkillMatch struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	RiskLevel   string  `json:"risk_level"`
	Origin      string  `json:"origin"`
	Score       float64 `json:"score"`
}

// Playbook is what use_skill hands the model: the skill's SKILL.md body and reference
// files. Trusted (a built-in or the owner's own) reaches the model as instructions; any
// other as data inside a data block (§3). The loop records each use on the turn.
type Playbook struct {
	SkillID string `json:"skill_id"`
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Origin  string `json:"origin"`
	Trusted bool   `json:"trusted"`
	Text    string `json:"playbook"`
	// References are the reference files' texts, by path.
	References map[string]string `json:"references,omitempty"`
}

// SkillUse is one use of a skill on a turn, for the Skills page.
type SkillUse struct {
	SkillID string    `json:"skill_id"`
	Name    string    `json:"name"`
	Version string    `json:"version,omitempty"`
	TurnID  uuid.UUID `json:"turn_id"`
	// Asked is the owner's message that began the turn, cut short.
	Asked string    `json:"asked"`
	At    time.Time `json:"at"`
}
