package skillpack

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Bounds of the manifest's fields.
const (
	maxDescription = 1024
	maxList        = 20
	maxListItem    = 100
	maxVersion     = 32
)

// nameRE is a skill's name: lowercase letters, digits and hyphens, as other agents' skills
// name themselves ("meeting-notes").
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// RiskLevels are the values risk_level may take (low when absent).
var RiskLevels = []string{"low", "medium", "high"}

// parseSkillMD splits SKILL.md into its YAML front matter, between a first line "---" and
// the next "---" line, and its body; decodes the front matter with go.yaml.in/yaml/v3
// (bounded in size, so an alias bomb has nothing to grow from) and checks it.
func parseSkillMD(text string) (Manifest, string, error) {
	fail := func(format string, a ...any) (Manifest, string, error) {
		return Manifest{}, "", &Error{Reason: ReasonFrontMatter, Msg: "SKILL.md: " + fmt.Sprintf(format, a...)}
	}
	text = strings.TrimPrefix(text, "\ufeff")
	rest, ok := cutLine(text, "---")
	if !ok {
		return fail("it must start with YAML front matter between two --- lines (name, description)")
	}
	end := -1
	for i := 0; i < len(rest); {
		j := strings.IndexByte(rest[i:], '\n')
		line := rest[i:]
		if j >= 0 {
			line = rest[i : i+j]
		}
		if strings.TrimRight(line, " \t\r") == "---" {
			end = i
			break
		}
		if j < 0 || i > MaxFrontMatter {
			break
		}
		i += j + 1
	}
	if end < 0 {
		return fail("the front matter has no closing --- line within %d KB", MaxFrontMatter>>10)
	}
	if end > MaxFrontMatter {
		return fail("the front matter is over %d KB", MaxFrontMatter>>10)
	}
	front, body := rest[:end], rest[end:]
	body, _ = cutLine(body, "---")
	var m Manifest
	dec := yaml.NewDecoder(bytes.NewReader([]byte(front)))
	if err := decodeSafely(dec, &m); err != nil {
		return fail("the front matter is not YAML a skill has: %s", oneLine(err.Error()))
	}
	if err := m.check(); err != nil {
		return fail("%s", err.Error())
	}
	return m, strings.TrimSpace(body), nil
}

// decodeSafely decodes one YAML document, turning a panic of the library on hostile input
// into an error.
func decodeSafely(dec *yaml.Decoder, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable YAML")
		}
	}()
	return dec.Decode(v)
}

// cutLine cuts a first line equal to want (ignoring trailing spaces and a carriage return)
// off s.
func cutLine(s, want string) (string, bool) {
	line, rest, found := strings.Cut(s, "\n")
	if strings.TrimRight(line, " \t\r") != want {
		return s, false
	}
	if !found {
		return "", true
	}
	return rest, true
}

// check trims and bounds the manifest's fields.
func (m *Manifest) check() error {
	m.Name, m.Description = strings.TrimSpace(m.Name), strings.TrimSpace(m.Description)
	m.Version, m.RiskLevel = strings.TrimSpace(m.Version), strings.ToLower(strings.TrimSpace(m.RiskLevel))
	switch {
	case m.Name == "":
		return fmt.Errorf("name is missing")
	case !nameRE.MatchString(m.Name):
		return fmt.Errorf("name %q must be 1–64 lowercase letters, digits and hyphens", clip(m.Name, 64))
	case m.Description == "":
		return fmt.Errorf("description is missing")
	case utf8.RuneCountInString(m.Description) > maxDescription:
		return fmt.Errorf("description is over %d characters", maxDescription)
	case utf8.RuneCountInString(m.Version) > maxVersion:
		return fmt.Errorf("version is over %d characters", maxVersion)
	}
	if m.RiskLevel == "" {
		m.RiskLevel = "low"
	}
	ok := false
	for _, r := range RiskLevels {
		ok = ok || r == m.RiskLevel
	}
	if !ok {
		return fmt.Errorf("risk_level %q must be low, medium or high", clip(m.RiskLevel, 20))
	}
	var err error
	if m.Triggers, err = checkList("triggers", m.Triggers); err != nil {
		return err
	}
	m.RequiredTools, err = checkList("required_tools", m.RequiredTools)
	return err
}

// checkList trims a list's items, drops empty ones and bounds it.
func checkList(field string, items []string) ([]string, error) {
	if len(items) > maxList {
		return nil, fmt.Errorf("%s has over %d items", field, maxList)
	}
	var out []string
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			continue
		}
		if utf8.RuneCountInString(it) > maxListItem {
			return nil, fmt.Errorf("an item of %s is over %d characters", field, maxListItem)
		}
		out = append(out, it)
	}
	return out, nil
}

// oneLine joins a multi-line message.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// validUTF8 is utf8.ValidString.
func validUTF8(s string) bool { return utf8.ValidString(s) }
