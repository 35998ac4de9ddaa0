// Package skillpack reads a skill — a SKILL.md with YAML front matter and optional
// reference files (Markdown, text, CSV) — from a folder, a zip or tar.gz archive or one
// Markdown text, refusing what is hostile with a reason per file, and scans it before it
// may be activated (scan.go). It is pure: it imports only the leaf, holds no state and
// reads no network, so the service, the CLI's offline scan and the fuzz targets share it
// (docs/ARCHITECTURE.md §16, docs/SKILLS.md).
//
// Everything it reads comes from strangers, so everything is bounded while it streams:
// the archive's bytes, the number of entries and files, each file's and all files'
// inflated bytes (whatever an archive declares), path length and depth, and the front
// matter's size.
package skillpack

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
)

// Bounds of a skill.
const (
	// MaxArchiveBytes bounds an archive (or a folder's files) as it arrives.
	MaxArchiveBytes = 1 << 20
	// MaxEntries bounds the entries an archive may hold, directories included.
	MaxEntries = 256
	// MaxFiles bounds a skill's files, SKILL.md included.
	MaxFiles = 32
	// MaxFileBytes bounds one file; MaxTotalBytes all files together, inflated.
	MaxFileBytes  = 256 << 10
	MaxTotalBytes = 1 << 20
	// MaxPathChars and MaxDepth bound a file's path inside the skill.
	MaxPathChars = 160
	MaxDepth     = 6
	// MaxFrontMatter bounds the YAML front matter of SKILL.md.
	MaxFrontMatter = 8 << 10
	// bombRatio: a file inflating past its bound at more than this ratio is a bomb.
	bombRatio = 100
)

// Refusal reasons, per file or for the whole skill.
const (
	ReasonOversize     = "oversize"
	ReasonTooMany      = "too_many_files"
	ReasonTraversal    = "path_traversal"
	ReasonSymlink      = "symlink"
	ReasonBinary       = "binary"
	ReasonBomb         = "decompression_bomb"
	ReasonFileType     = "file_type"
	ReasonCorrupt      = "corrupt"
	ReasonNoSkillMD    = "missing_skill_md"
	ReasonFrontMatter  = "front_matter"
	ReasonSpecialFile  = "special_file"
	ReasonDuplicate    = "duplicate"
	ReasonUnknownForm  = "unknown_format"
	ReasonEmptyArchive = "empty"
)

// Refusal is one file refused, with why.
type Refusal struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Why    string `json:"why"`
}

// Error is a skill refused: Reason for the whole, and the files refused, each with its
// reason. Its message lists them.
type Error struct {
	Reason string
	Msg    string
	Files  []Refusal
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	for i, f := range e.Files {
		if i == 10 {
			fmt.Fprintf(&b, "; and %d more", len(e.Files)-i)
			break
		}
		fmt.Fprintf(&b, "; %s: %s (%s)", steward.Visible(clip(f.Path, 80)), f.Reason, f.Why)
	}
	return b.String()
}

// Manifest is SKILL.md's front matter.
type Manifest struct {
	Name          string   `yaml:"name" json:"name"`
	Description   string   `yaml:"description" json:"description"`
	Triggers      []string `yaml:"triggers" json:"triggers,omitempty"`
	RequiredTools []string `yaml:"required_tools" json:"required_tools,omitempty"`
	RiskLevel     string   `yaml:"risk_level" json:"risk_level"`
	Version       string   `yaml:"version" json:"version,omitempty"`
}

// File is one file of a skill, as text.
type File struct {
	Path string
	Text string
}

// Skill is a skill read and checked: its manifest, SKILL.md's body (after the front
// matter) and every file, SKILL.md first, the others by path.
type Skill struct {
	Manifest Manifest
	Body     string
	Files    []File
}

// SkillMD is the name of a skill's main file.
const SkillMD = "SKILL.md"

// Hash is the SHA-256 over every file's path and text, in order: what an install binds to.
func (s Skill) Hash() string {
	h := sha256.New()
	for _, f := range s.Files {
		fmt.Fprintf(h, "%d:%s\n%d:", len(f.Path), f.Path, len(f.Text))
		h.Write([]byte(f.Text))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Listing is the skill's files with sizes and hashes.
func (s Skill) Listing() []steward.SkillFile {
	out := make([]steward.SkillFile, len(s.Files))
	for i, f := range s.Files {
		sum := sha256.Sum256([]byte(f.Text))
		out[i] = steward.SkillFile{Path: f.Path, Size: int64(len(f.Text)), SHA256: hex.EncodeToString(sum[:])}
	}
	return out
}

// References are the reference files' texts by path (every file but SKILL.md).
func (s Skill) References() map[string]string {
	if len(s.Files) < 2 {
		return nil
	}
	out := make(map[string]string, len(s.Files)-1)
	for _, f := range s.Files[1:] {
		out[f.Path] = f.Text
	}
	return out
}

// FromFiles checks a skill's files (paths already inside the skill) and parses SKILL.md.
// Each refused file is listed with its reason.
func FromFiles(files []File) (Skill, error) {
	var refused []Refusal
	seen := map[string]bool{}
	var kept []File
	for _, f := range files {
		if r, ok := checkFile(f); !ok {
			refused = append(refused, r)
			continue
		}
		if seen[f.Path] {
			refused = append(refused, Refusal{f.Path, ReasonDuplicate, "the same path twice"})
			continue
		}
		seen[f.Path] = true
		kept = append(kept, f)
	}
	if len(kept)+len(refused) > MaxFiles {
		return Skill{}, &Error{Reason: ReasonTooMany, Msg: fmt.Sprintf("the skill has %d files; at most %d are allowed", len(kept)+len(refused), MaxFiles)}
	}
	if len(refused) > 0 {
		return Skill{}, &Error{Reason: refused[0].Reason, Msg: "the skill was refused", Files: refused}
	}
	sort.Slice(kept, func(i, j int) bool {
		if (kept[i].Path == SkillMD) != (kept[j].Path == SkillMD) {
			return kept[i].Path == SkillMD
		}
		return kept[i].Path < kept[j].Path
	})
	if len(kept) == 0 || kept[0].Path != SkillMD {
		return Skill{}, &Error{Reason: ReasonNoSkillMD, Msg: "the skill has no SKILL.md at its top level"}
	}
	m, body, err := parseSkillMD(kept[0].Text)
	if err != nil {
		return Skill{}, err
	}
	return Skill{Manifest: m, Body: body, Files: kept}, nil
}

// FromMarkdown reads a skill that is only its SKILL.md (an uploaded .md, a document's text).
func FromMarkdown(text string) (Skill, error) {
	if len(text) > MaxFileBytes {
		return Skill{}, &Error{Reason: ReasonOversize, Msg: fmt.Sprintf("SKILL.md is over %d KB", MaxFileBytes>>10)}
	}
	return FromFiles([]File{{Path: SkillMD, Text: text}})
}

// allowedExt are the reference files' types: Markdown, text and CSV.
var allowedExt = []string{".md", ".markdown", ".txt", ".csv"}

// checkFile refuses a file whose path leaves the skill, is too long or deep, whose type is
// not Markdown, text or CSV, that is too big, or that is not text.
func checkFile(f File) (Refusal, bool) {
	if r, ok := checkPath(f.Path); !ok {
		return r, false
	}
	lower := strings.ToLower(f.Path)
	if !hasAnySuffix(lower, allowedExt) {
		return Refusal{f.Path, ReasonFileType, "only Markdown, text and CSV files belong in a skill (no scripts, no binaries)"}, false
	}
	if len(f.Text) > MaxFileBytes {
		return Refusal{f.Path, ReasonOversize, fmt.Sprintf("over %d KB", MaxFileBytes>>10)}, false
	}
	if !isText(f.Text) {
		return Refusal{f.Path, ReasonBinary, "not UTF-8 text (binary content)"}, false
	}
	return Refusal{}, true
}

// checkPath refuses a path that is absolute, climbs out (".."), has empty or "." parts,
// backslashes, a drive letter or control characters, or is too long or deep.
func checkPath(p string) (Refusal, bool) {
	switch {
	case p == "":
		return Refusal{p, ReasonTraversal, "an empty path"}, false
	case len(p) > MaxPathChars:
		return Refusal{p, ReasonTraversal, fmt.Sprintf("a path over %d characters", MaxPathChars)}, false
	case strings.HasPrefix(p, "/"), strings.Contains(p, "\\"), strings.Contains(p, ":"):
		return Refusal{p, ReasonTraversal, "an absolute path or one with a drive or backslash"}, false
	case strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return Refusal{p, ReasonTraversal, "a control character in the path"}, false
	}
	parts := strings.Split(p, "/")
	if len(parts) > MaxDepth {
		return Refusal{p, ReasonTraversal, fmt.Sprintf("deeper than %d folders", MaxDepth)}, false
	}
	for _, part := range parts {
		if part == "" || part == "." || part == ".." {
			return Refusal{p, ReasonTraversal, "a path that leaves the skill's folder or is not clean"}, false
		}
	}
	return Refusal{}, true
}

// isText reports UTF-8 without NUL or other C0 controls but tab, line feed, carriage return
// and form feed.
func isText(s string) bool {
	if !validUTF8(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' {
			return false
		}
	}
	return true
}

func hasAnySuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
