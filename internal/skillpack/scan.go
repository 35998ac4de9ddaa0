package skillpack

import (
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/trace"
)

// The scanner grades a skill's prose before it may be activated (docs/SKILLS.md, "The
// scanner"): prompt injection, role hijack, safety bypass, exfiltration, hidden text, and in
// any file scripts and secrets. A finding at or above high blocks activation unless the
// owner overrides it, which the audit log records. It is a tripwire, not the wall: whatever
// a playbook says, a write still waits at the gate (§2, §3), which is code.

// Rule names.
const (
	RuleInjection    = "prompt_injection"
	RuleRoleHijack   = "role_hijack"
	RuleSafetyBypass = "safety_bypass"
	RuleExfiltration = "exfiltration"
	RuleHiddenText   = "hidden_text"
	RuleScript       = "script"
	RuleSecret       = "secret"
)

// maxFindings bounds a report.
const maxFindings = 100

// pattern is one thing a rule looks for in a paragraph's normalised text.
type pattern struct {
	rule     string
	severity steward.Severity
	re       *regexp.Regexp
	why      string
	refsOnly bool // only in reference files
	mdOnly   bool // only in SKILL.md
}

var patterns = []pattern{
	{rule: RuleInjection, severity: steward.SeverityHigh, why: "tells the model to drop the instructions it has",
		re: regexp.MustCompile(`\b(ignore|disregard|forget|override|overrule)\b.{0,40}\b(previous|prior|above|earlier|all|any|your|system|original|other)\b.{0,25}\b(instructions?|rules|prompts?|guidelines|directions|directives)\b`)},
	{rule: RuleInjection, severity: steward.SeverityHigh, why: "announces new instructions or reaches for the system prompt",
		re: regexp.MustCompile(`\bnew (system )?instructions\s*:|\b(reveal|print|show|repeat|leak|output)\b.{0,30}\bsystem prompt\b`)},
	{rule: RuleInjection, severity: steward.SeverityHigh, why: "forges a data block or a role's tag",
		re: regexp.MustCompile(`<\s*/?\s*(data|system|assistant|user|instructions?)\b[^>]{0,80}>`)},
	{rule: RuleRoleHijack, severity: steward.SeverityHigh, why: "tries to give the model another identity",
		re: regexp.MustCompile(`\byou are (now|no longer)\b|\bfrom now on,? you\b|\b(act|behave) as (an? )?(unrestricted|unfiltered|jailbroken|evil|different|new)\b|\bpretend (to be|you are)\b|\b(developer|god|dan|jailbreak) mode\b|\byour (new )?(role|identity|persona) is\b`)},
	{rule: RuleSafetyBypass, severity: steward.SeverityCritical, why: "tries to get past the owner's approval or Steward's limits",
		re: regexp.MustCompile(`\bauto[- ]?approv|\bapprove (your|its|their) own\b|\b(always|automatically|silently) (approve|allow|accept|confirm)\b|\b(ignore|skip|bypass|circumvent|disable|turn off|override|avoid)\b.{0,30}\b(approvals?|confirmations?|the gate|safety|guard ?rails?|kill switch|spending caps?|caps)\b|\b(without|no need to|don'?t|do not|never)\b (ask(ing)? (the (owner|user) )?(for )?(approval|permission|confirmation)|(asking|waiting) for (approval|permission|confirmation)|confirm(ing)? with the (owner|user))|\bgate mode\b|\bauto mode\b`)},
	{rule: RuleExfiltration, severity: steward.SeverityHigh, why: "a URL built to carry data out",
		re: regexp.MustCompile(`https?://\S*(\{\{?[^}\s]*\}\}?|\$\{[^}\s]*\}|%s|<[a-z_ ]+>|\[(data|secret|token|key|password|memory|content|notes)\])|!\[[^\]]*\]\(https?://[^)\s]*\?[^)\s]*\)`)},
	{rule: RuleExfiltration, severity: steward.SeverityHigh, why: "tells the model to send something out",
		re: regexp.MustCompile(`\b(send|post|upload|forward|exfiltrate|transmit|leak|e-?mail|mail|copy|paste|submit)\b.{0,80}\bto\b.{0,40}(https?://|www\.|[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}|webhook|pastebin|requestbin|ngrok|discord|telegram)`)},
	{rule: RuleExfiltration, severity: steward.SeverityHigh, why: "tells the model to send the owner's data somewhere",
		re: regexp.MustCompile(`\b(send|post|upload|forward|exfiltrate|transmit|leak)\b.{0,60}\b(api keys?|passwords?|secrets?|tokens?|credentials|memor(y|ies)|conversations?|chat history|documents|ledger|bank|all (the |of the )?(owner'?s )?(data|tasks|facts|notes))\b.{0,40}\bto\b`)},
	{rule: RuleHiddenText, severity: steward.SeverityHigh, why: "text styled to be invisible to a reader",
		re: regexp.MustCompile(`display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0`)},
	{rule: RuleScript, severity: steward.SeverityHigh, why: "a command that downloads and runs code, or destroys files",
		re: regexp.MustCompile(`\b(curl|wget|iwr|invoke-webrequest)\b[^|]{0,200}\|\s*(sudo\s+)?(ba|z|da)?sh\b|\brm\s+-rf\s+[/~*]|\bbase64\s+(-d|--decode)\b|\bpowershell\b.{0,30}-(enc|encodedcommand)\b|<script\b|javascript:|\bsubprocess\.|\bos\.system\s*\(`)},
	{rule: RuleScript, severity: steward.SeverityHigh, why: "a script in a reference file (a skill's reference files are Markdown, text and CSV)", refsOnly: true,
		re: regexp.MustCompile("(?m)^#!|```\\s*(bash|sh|zsh|shell|python|py|powershell|ps1|js|javascript|ruby|perl)\\b|\\b(eval|exec)\\s*\\(")},
	{rule: RuleScript, severity: steward.SeverityLow, why: "a code block: Steward runs no scripts, so a playbook needing one will not work", mdOnly: true,
		re: regexp.MustCompile("```\\s*(bash|sh|zsh|shell|python|py|powershell|ps1|js|javascript|ruby|perl)\\b")},
}

// invisible reports a character that hides text from a reader but not from a model:
// zero-width characters, bidirectional controls, Unicode tags, a soft hyphen.
func invisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x2069,
		r == 0xFEFF, r == 0x061C, r == 0x180E, r == 0x00AD, r >= 0xE0000 && r <= 0xE007F:
		return true
	}
	return false
}

// Scan grades every file of s and returns its findings (at most 100) and the worst
// severity among them.
func Scan(s Skill) ([]steward.SkillFinding, steward.Severity) {
	sc := &scanner{seen: map[string]bool{}}
	for i, f := range s.Files {
		sc.file(f, i == 0)
	}
	return sc.findings, sc.worst
}

type scanner struct {
	findings []steward.SkillFinding
	worst    steward.Severity
	seen     map[string]bool
}

// add records a finding once per rule, file and line.
func (sc *scanner) add(rule string, sev steward.Severity, path string, line int, excerpt, why string) {
	key := fmt.Sprint(rule, "\x00", path, "\x00", line)
	if sc.seen[key] || len(sc.findings) >= maxFindings {
		return
	}
	sc.seen[key] = true
	sc.findings = append(sc.findings, steward.SkillFinding{Rule: rule, Severity: sev, Path: path, Line: line,
		Excerpt: steward.Visible(clip(strings.Join(strings.Fields(excerpt), " "), 120)), Why: why})
	sc.worst = max(sc.worst, sev)
}

// file scans one file: its hidden text line by line, its secrets line by line, and every
// pattern over each paragraph's normalised text (so a phrase broken over lines still
// matches).
func (sc *scanner) file(f File, main bool) {
	lines := strings.Split(f.Text, "\n")
	for i, l := range lines {
		if j := strings.IndexFunc(l, invisible); j >= 0 {
			sc.add(RuleHiddenText, steward.SeverityHigh, f.Path, i+1, l, "invisible characters (zero-width, bidirectional or tag) hide text from a reader")
		}
		if strings.Contains(l, "<!--") {
			sc.add(RuleHiddenText, steward.SeverityHigh, f.Path, i+1, l, "an HTML comment: hidden from a reader of the rendered page, not from the model")
		}
		if trace.Redact(l) != l {
			sc.add(RuleSecret, steward.SeverityHigh, f.Path, i+1, trace.Redact(l), "a secret (key, token, password) in a skill's file")
		}
	}
	start := 0
	for i := 0; i <= len(lines); i++ {
		// A paragraph ends at a blank line and at front matter's "---".
		if i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.TrimSpace(lines[i]) != "---" {
			continue
		}
		if start < i {
			sc.paragraph(f.Path, start+1, lines[start:i], main)
		}
		start = i + 1
	}
}

// paragraph matches every pattern against one paragraph's lines: NFKC-folded, lower case,
// without invisible characters, its whitespace collapsed into single spaces (so a phrase
// broken over lines still matches); a finding names the line its match starts on.
func (sc *scanner) paragraph(path string, first int, lines []string, main bool) {
	var flat strings.Builder
	var lineOf []int // the line of each byte of flat
	for i, l := range lines {
		l = strings.ToLower(norm.NFKC.String(strings.Map(func(r rune) rune {
			if invisible(r) {
				return -1
			}
			return r
		}, l)))
		for _, w := range strings.Fields(l) {
			if flat.Len() > 0 {
				flat.WriteByte(' ')
				lineOf = append(lineOf, first+i)
			}
			flat.WriteString(w)
			for range len(w) {
				lineOf = append(lineOf, first+i)
			}
		}
	}
	text := flat.String()
	for _, p := range patterns {
		if p.refsOnly && main || p.mdOnly && !main {
			continue
		}
		subject := text
		if p.refsOnly {
			subject = strings.ToLower(strings.Join(lines, "\n")) // a shebang is at a line's start
		}
		loc := p.re.FindStringIndex(subject)
		if loc == nil {
			continue
		}
		at := first
		if p.refsOnly {
			at += strings.Count(subject[:loc[0]], "\n")
		} else if loc[0] < len(lineOf) {
			at = lineOf[loc[0]]
		}
		sc.add(p.rule, p.severity, path, at, excerptAround(subject, loc), p.why)
	}
}

// excerptAround is the match with a little context.
func excerptAround(s string, loc []int) string {
	from, to := max(loc[0]-20, 0), min(loc[1]+20, len(s))
	for from > 0 && from > loc[0]-40 && s[from-1] != ' ' && s[from-1] != '\n' {
		from-- // to a word's start
	}
	for from > 0 && !utf8Start(s[from]) {
		from--
	}
	for to < len(s) && to < loc[1]+40 && s[to] != ' ' && s[to] != '\n' {
		to++
	}
	for to < len(s) && !utf8Start(s[to]) {
		to++
	}
	return s[from:to]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
