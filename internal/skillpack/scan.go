package skillpack

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

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

// pattern is one thing a rule looks for in a file's folded text (fold.go).
type pattern struct {
	rule      string
	severity  steward.Severity
	re        *regexp.Regexp
	why       string
	refsOnly  bool     // only in reference files, over their raw lines
	mdOnly    bool     // only in SKILL.md
	negatable bool     // not when the word before it says no: "never ask for a password"
	needles   []string // a text holds one of them or the pattern cannot match (prefilter.go)
}

func init() {
	for i := range patterns {
		patterns[i].needles = needles(patterns[i].re)
	}
}

// anyOf compiles alternatives as one pattern. Go's regexp (RE2) matches in time linear in
// the text, whatever the text: no pattern can be made to backtrack.
func anyOf(alternatives ...string) *regexp.Regexp {
	return regexp.MustCompile(strings.Join(alternatives, "|"))
}

// Words patterns share: where data is sent, and what a secret is called.
const (
	target  = `(https?://|www\.|[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}|webhook|pastebin|requestbin|ngrok|discord|telegram)`
	secrets = `(api ?keys?|access keys?|secret keys?|private keys?|passwords?|passphrases?|passcodes?|pin|pin codes?|tokens?|credentials|login details|2fa codes?|one-time codes?|recovery (codes?|phrases?)|seed phrases?|card numbers?|cvv|security codes?|bank details)`
)

var patterns = []pattern{
	{rule: RuleInjection, severity: steward.SeverityHigh, why: "tells the model to drop the instructions it has",
		re: anyOf(`\b(ignore|disregard|forget|override|overrule)\b.{0,40}\b(previous|prior|above|earlier|all|any|your|system|original|other)\b.{0,25}\b(instructions?|rules|prompts?|guidelines|directions|directives)\b`,
			// French, Spanish, German
			`\b(ignore[rz]?|oublie[rz]?|neglige[rz]?|ne tene[zs] pas compte)\b.{0,50}\b(instructions?|consignes|regles|directives)\b.{0,20}\b(precedentes?|anterieures?|ci-dessus|initiales|du systeme|d'origine)\b`,
			`\b(ignora|ignore|ignorar|olvida|olvide|olvidar|omite|descarta)\b.{0,40}\b(instrucciones|reglas|indicaciones|directrices)\b.{0,20}\b(anteriores|previas|del sistema|originales|de arriba)\b`,
			`\b(ignoriere|ignorieren|ignoriert|vergiss|vergessen sie|missachte)\b.{0,50}\b(vorherigen|bisherigen|vorigen|obigen|fruheren|alle|deine|ihre|ursprunglichen)\b.{0,30}\b(anweisungen|instruktionen|regeln|vorgaben|befehle)\b`)},
	{rule: RuleInjection, severity: steward.SeverityHigh, why: "announces new instructions or reaches for the system prompt",
		re: regexp.MustCompile(`\bnew (system )?instructions\s*:|\b(reveal|print|show|repeat|leak|output)\b.{0,30}\bsystem prompt\b`)},
	{rule: RuleInjection, severity: steward.SeverityHigh, why: "forges a data block or a role's tag",
		re: regexp.MustCompile(`<\s*/?\s*(data|system|assistant|user|instructions?)\b[^>]{0,80}>`)},
	{rule: RuleRoleHijack, severity: steward.SeverityHigh, why: "tries to give the model another identity",
		re: regexp.MustCompile(`\byou are (now|no longer)\b|\bfrom now on,? you\b|\b(act|behave) as (an? )?(unrestricted|unfiltered|jailbroken|evil|different|new)\b|\bpretend (to be|you are)\b|\b(developer|god|dan|jailbreak) mode\b|\byour (new )?(role|identity|persona) is\b`)},
	{rule: RuleSafetyBypass, severity: steward.SeverityCritical, why: "tries to get past the owner's approval or Steward's limits",
		re: regexp.MustCompile(`\bauto[- ]?approv|\bapprove (your|its|their) own\b|\b(always|automatically|silently) (approve|allow|accept|confirm)\b|\b(ignore|skip|bypass|circumvent|disable|turn off|override|avoid)\b.{0,30}\b(approvals?|confirmations?|the gate|safety|guard ?rails?|kill switch|spending caps?|caps)\b|\b(without|no need to|don'?t|do not|never)\b (ask(ing)? (the (owner|user) )?(for )?(approval|permission|confirmation)|(asking|waiting) for (approval|permission|confirmation)|confirm(ing)? with the (owner|user))|\bgate mode\b|\bauto mode\b`)},
	{rule: RuleSafetyBypass, severity: steward.SeverityCritical, why: "claims the owner approved in advance: only the owner's yes on each write approves it", negatable: true,
		re: anyOf(`\bpre-?(approv|authori[sz]|consent)`,
			`\b(approval|permission|consent|authori[sz]ation|confirmation)s? (has|have|was|were|is|are) already (been )?(given|granted|obtained)\b`,
			`\balready (been )?(given|granted|obtained) (approval|permission|consent)\b`,
			`\b(approved|authori[sz]ed|consented to) (everything|all (of )?(your|its|the|these|such) (actions|writes|payments|transfers|requests|changes|calls)|in advance)\b`,
			`\b(blanket|standing|unconditional|permanent) (approval|permission|consent|authori[sz]ation)\b`,
			`\b(consider|treat|assume) (it|this|that|them|these|everything|(every|all|each|any) [a-z]+|the [a-z]+)( as| is| are| was| were)? (already )?(pre-?)?(approved|authori[sz]ed|confirmed)\b`,
			`\b(deja|prealablement) (tout )?(approuve|autorise|valide)|\bpre-?(approuve|autorise)`,
			`\b(ya|previamente) (ha |han )?(aprobado|autorizado)|\bpre-?aprobad`,
			`\b(bereits|schon|vorab|im voraus) (alles )?(genehmigt|freigegeben|erlaubt|bestatigt)`)},
	{rule: RuleSafetyBypass, severity: steward.SeverityCritical, why: "tells the model to act behind the owner's back",
		re: anyOf(`\b(do not|don'?t|never|without) (tell|inform|notify|alert|warn)(ing)? (the )?(owner|user)\b`,
			`\b(do not|don'?t|never|without) (mention|report|reveal|show)(ing)? (this|it|that|anything) to (the )?(owner|user)\b`,
			`\b(keep|hide) (this|it|that|these)( [a-z]+){0,3} (secret )?from (the )?(owner|user)\b|\bwithout (the )?(owner|user)('?s)? (knowing|knowledge|noticing)\b`,
			// French, Spanish, German: without asking, don't tell the owner
			`\bsans (demander|attendre|en informer|informer|prevenir|avertir|consulter)\b.{0,30}\b(proprietaire|utilisateur|permission|autorisation|confirmation|approbation|accord)\b`,
			`\b(ne |n')(demande[rz]?|attende[zs]?)\b.{0,30}\b(pas|jamais)\b.{0,30}\b(confirmation|permission|autorisation|approbation|accord|validation)\b`,
			`\b(ne |n')(dites?|dis|informe[rz]?|previen[st]|prevene[zs]|signale[rz]?|avertisse[zs]?)\b.{0,30}\b(rien|pas|jamais)\b.{0,30}\b(proprietaire|utilisateur)\b`,
			`\bsin (preguntar|pedir|consultar|avisar|informar|decir|esperar)\b.{0,30}\b(propietario|dueno|usuario|permiso|confirmacion|aprobacion|autorizacion)\b`,
			`\bno (le |les )?(preguntes|pidas|pregunte|pida|esperes|espere)\b.{0,40}\b(permiso|confirmacion|aprobacion|autorizacion)\b`,
			`\bno (le |les )?(digas|informes|avises|cuentes|diga|informe|avise|cuente)\b.{0,40}\b(propietario|dueno|usuario|nada)\b`,
			`\bohne\b.{0,30}\b(zu fragen|nachzufragen|zu informieren|bescheid zu geben|zu benachrichtigen|ruckfrage|bestatigung|genehmigung|erlaubnis|zustimmung)\b`,
			`\b(sage?|erzahle?|verrate|informiere|benachrichtige|warne)\b.{0,30}\b(besitzer|eigentumer|nutzer|benutzer|inhaber)\b.{0,20}\b(nichts|nicht|nie|niemals)\b`,
			`\b(frage?|bitte)\b.{0,20}\b(nicht|nie|niemals)\b.{0,30}\b(bestatigung|genehmigung|erlaubnis|zustimmung|freigabe)\b`)},
	{rule: RuleExfiltration, severity: steward.SeverityHigh, why: "a URL built to carry data out",
		re: anyOf(`https?://\S*(\{\{?[^{}]{0,60}\}\}?|\$\{[^}]{0,60}\}|\$[a-z_][a-z0-9_]{1,40}([^=a-z0-9_]|$)|%s|%7b%7b|%7b[a-z_]{1,40}%7d|<[a-z_ ]{1,40}>|\[\[[^\]]{0,60}\]\]|\[(data|secret|token|key|password|memory|content|notes)\])`,
			`!\[[^\]]*\]\(https?://[^)\s]*\?[^)\s]*\)`)},
	{rule: RuleExfiltration, severity: steward.SeverityHigh, why: "tells the model to send something out",
		re: anyOf(`\b(send|post|upload|forward|exfiltrate|transmit|leak|e-?mail|mail|copy|paste|submit)\b.{0,80}\bto\b.{0,40}`+target,
			// French, Spanish, German
			`\b(envoie[rsz]?|envoyez|envoyer|envoyons|transmet[sz]?|transmettez|transmettre|transfere[rz]?|publie[rz]?|postez|televerse[rz]?)\b.{0,80}\b(a|au|aux|vers|sur|chez)\b.{0,40}`+target,
			`\b(envia|envie|enviar|enviale|manda|mande|mandar|reenvia|reenviar|transmite|transmitir|sube|subir|publica|publicar)\b.{0,80}\b(a|al|hacia)\b.{0,40}`+target,
			`\b(sende[nt]?|schicke?[nt]?|ubermittle|ubertrage|leite|lade)\b.{0,80}\b(an|nach|zu|auf)\b.{0,40}`+target)},
	{rule: RuleExfiltration, severity: steward.SeverityHigh, why: "tells the model to send the owner's data somewhere",
		re: regexp.MustCompile(`\b(send|post|upload|forward|exfiltrate|transmit|leak)\b.{0,60}\b(api keys?|passwords?|secrets?|tokens?|credentials|memor(y|ies)|conversations?|chat history|documents|ledger|bank|all (the |of the )?(owner'?s )?(data|tasks|facts|notes))\b.{0,40}\bto\b`)},
	{rule: RuleExfiltration, severity: steward.SeverityHigh, why: "asks for the owner's keys, tokens or passwords (Steward keeps secrets in its settings, never in a conversation)", negatable: true,
		re: regexp.MustCompile(`\b(ask|collect|gather|request|obtain|fill in|note down|write down|record|store|save|remember|keep|list|paste|provide|enter|share|include|copy)\b.{0,40}\b(owner'?s?|user'?s?|their|his|her|all( the| of the)?|every|each)\b.{0,12}\b` + secrets + `\b`)},
	{rule: RuleExfiltration, severity: steward.SeverityHigh, why: "a table collecting keys, tokens or passwords",
		re: regexp.MustCompile(`\|[^|]{0,60}\b` + secrets + `\b[^|]{0,60}\|([^|]{0,60}\|){0,8}\s?:?-{3,}`)},
	{rule: RuleHiddenText, severity: steward.SeverityHigh, why: "text styled to be invisible to a reader",
		re: regexp.MustCompile(`display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0`)},
	{rule: RuleHiddenText, severity: steward.SeverityHigh, why: "tells the model to decode hidden text and follow it",
		re: regexp.MustCompile(`\b(decode|decipher|unscramble|decodifica|dekodiere|entschlussele)\w*\b.{0,40}\b(and|then|et|puis|y|luego|und|dann)\b.{0,20}\b(follow|obey|execute|run|carry out|apply|do as|do what|suivez|suis|executez|applique|sigue|ejecuta|befolge|fuhre)\w*\b`)},
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
// severity among them. It reads at most MaxFileBytes of a file and MaxTotalBytes in all
// (what Read accepts); a file going on past that is a finding, never unread text passed
// as clean.
func Scan(s Skill) ([]steward.SkillFinding, steward.Severity) {
	sc := &scanner{seen: map[string]bool{}, fold: newFolder()}
	budget := MaxTotalBytes
	for i, f := range s.Files {
		text := cut(f.Text, min(MaxFileBytes, budget))
		budget -= len(text)
		if len(text) < len(f.Text) {
			sc.add(RuleHiddenText, steward.SeverityHigh, f.Path, 1+strings.Count(text, "\n"), f.Path,
				fmt.Sprintf("the file goes on past what the scanner reads (%d KB a file, %d KB in all): the rest was not scanned", MaxFileBytes>>10, MaxTotalBytes>>10))
		}
		sc.file(File{Path: f.Path, Text: text}, i == 0)
	}
	order := map[string]int{}
	for i, f := range s.Files {
		order[f.Path] = i
	}
	slices.SortStableFunc(sc.findings, func(a, b steward.SkillFinding) int { // as a reader meets them
		return cmp.Or(cmp.Compare(order[a.Path], order[b.Path]), cmp.Compare(a.Line, b.Line))
	})
	return sc.findings, sc.worst
}

// cut is s's first n bytes at most, ending on a whole character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

type scanner struct {
	findings []steward.SkillFinding
	worst    steward.Severity
	seen     map[string]bool
	fold     *folder
}

// add records a finding once per rule, file and line. A full report (maxFindings) still
// takes a finding worse than its least severe one, in that one's place, so the worst
// severity — what blocks a skill — and a finding showing it are never crowded out.
func (sc *scanner) add(rule string, sev steward.Severity, path string, line int, excerpt, why string) {
	key := findingKey(rule, path, line)
	if sc.seen[key] {
		return
	}
	at := len(sc.findings)
	if at >= maxFindings {
		at = 0
		for i, f := range sc.findings {
			if f.Severity < sc.findings[at].Severity {
				at = i
			}
		}
		if sc.findings[at].Severity >= sev {
			return
		}
		old := sc.findings[at]
		delete(sc.seen, findingKey(old.Rule, old.Path, old.Line))
		sc.findings = slices.Delete(sc.findings, at, at+1)
	}
	sc.seen[key] = true
	sc.findings = append(sc.findings, steward.SkillFinding{Rule: rule, Severity: sev, Path: path, Line: line,
		Excerpt: steward.Visible(clip(strings.Join(strings.Fields(excerpt), " "), 120)), Why: why})
	sc.worst = max(sc.worst, sev)
}

func findingKey(rule, path string, line int) string {
	return fmt.Sprint(rule, "\x00", path, "\x00", line)
}

// file scans one file: its hidden text and secrets line by line, every pattern over the
// whole file folded into one text (so an instruction split over lines, sections or
// headings still matches), a reference file's raw lines for scripts, and whatever it
// hides in base64 or hex.
func (sc *scanner) file(f File, main bool) {
	for i, l := range strings.Split(f.Text, "\n") {
		if j := strings.IndexFunc(l, invisible); j >= 0 {
			sc.add(RuleHiddenText, steward.SeverityHigh, f.Path, i+1, l, "invisible characters (zero-width, bidirectional or tag) hide text from a reader")
		}
		if w := sc.fold.mixedWord(l); w != "" {
			sc.add(RuleHiddenText, steward.SeverityHigh, f.Path, i+1, l, fmt.Sprintf("%q mixes Latin letters with look-alikes from another script (%s), a disguise", w, scripts(w)))
		}
		if strings.Contains(l, "<!--") {
			sc.add(RuleHiddenText, steward.SeverityHigh, f.Path, i+1, l, "an HTML comment: hidden from a reader of the rendered page, not from the model")
		}
		if trace.Redact(l) != l {
			sc.add(RuleSecret, steward.SeverityHigh, f.Path, i+1, trace.Redact(l), "a secret (key, token, password) in a skill's file")
		}
	}
	sc.match(f.Path, sc.fold.flatten(f.Text, 1), main, "")
	if !main {
		sc.raw(f)
	}
	sc.encoded(f, main)
}

// match runs every pattern over a folded text; a finding names the line its match
// starts on.
func (sc *scanner) match(path string, fl flat, main bool, where string) {
	for _, p := range patterns {
		if p.refsOnly || p.mdOnly && !main || !holdsAny(fl.text, p.needles) {
			continue
		}
		for _, loc := range p.re.FindAllStringIndex(fl.text, maxFindings) {
			if p.negatable && negated(fl.text[:loc[0]]) {
				continue
			}
			sc.add(p.rule, p.severity, path, fl.lineAt(loc[0]), excerptAround(fl.text, loc), p.why+where)
		}
	}
}

// negated: the word before a match says no ("never ask for …", "do not assume …").
func negated(before string) bool {
	for _, no := range []string{"never ", "not ", "don't ", "no "} {
		if strings.HasSuffix(before, no) {
			return true
		}
	}
	return false
}

// raw runs the reference-file patterns over a file's lower-cased lines (a shebang is at
// a line's start).
func (sc *scanner) raw(f File) {
	text := strings.ToLower(f.Text)
	for _, p := range patterns {
		if !p.refsOnly {
			continue
		}
		line, counted := 1, 0
		for _, loc := range p.re.FindAllStringIndex(text, maxFindings) {
			line += strings.Count(text[counted:loc[0]], "\n")
			counted = loc[0]
			sc.add(p.rule, p.severity, f.Path, line, excerptAround(text, loc), p.why)
		}
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
