package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// Skills, as the demo understands them (docs/SKILLS.md): "use the meeting notes skill on
// this: <transcript>" finds the skill (find_skill), loads it (use_skill) and, for a built-in
// or the owner's own skill — instructions — follows it with the tools it names; a skill from
// outside is data, which the demo reads and never follows. "find a skill for …" only finds.

// skillRequest is the owner's request of a skill: the skill asked for and the material it
// works on (the text after "on this:" or the colon).
type skillRequest struct {
	skill, material string
	useIt           bool
}

var (
	useSkillRE  = regexp.MustCompile(`(?is)^\s*(?:please\s+)?use (?:the |my )?(.+?) skill\b(?:\s+(?:on|for|with) (?:this|these|the following)\b)?\s*[:,.]?\s*(.*)$`)
	findSkillRE = regexp.MustCompile(`(?is)^\s*(?:find|search for|is there) (?:a |me a )?skills? (?:for|to|about) (.+?)\??\s*$`)
)

// parseSkillRequest recognises "use the X skill [on this]: material" and "find a skill for X".
func parseSkillRequest(msg string) (skillRequest, bool) {
	if m := useSkillRE.FindStringSubmatch(msg); m != nil {
		return skillRequest{skill: strings.TrimSpace(m[1]), material: strings.TrimSpace(m[2]), useIt: true}, true
	}
	if m := findSkillRE.FindStringSubmatch(msg); m != nil {
		return skillRequest{skill: strings.TrimSpace(m[1])}, true
	}
	return skillRequest{}, false
}

// ownerRequest is the text of the turn's owner message: the last user message that is not
// tool results.
func ownerRequest(msgs []steward.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == steward.RoleUser && len(toolResults(msgs[i])) == 0 {
			return msgs[i].Text()
		}
	}
	return ""
}

// skillStep is the demo's next step in a skill request after results came back: use the
// skill find_skill found, follow the playbook use_skill gave, or answer from what the
// playbook's tools returned. ok false: not a skill request.
func skillStep(req llm.Request, results []steward.ToolResult, now time.Time) (llm.Response, bool) {
	sr, ok := parseSkillRequest(ownerRequest(req.Messages))
	if !ok {
		return llm.Response{}, false
	}
	for _, r := range results {
		switch r.Name {
		case "find_skill":
			return afterFind(req, sr, r), true
		case "use_skill":
			return afterUse(req, sr, r, now), true
		}
	}
	p, ok := usedPlaybook(req.Messages)
	if !ok {
		return llm.Response{}, false
	}
	return text(skillAnswer(p, sr, results, req.Messages, now)), true
}

// afterFind uses the best skill found, or says none was; for "find a skill" it lists them.
func afterFind(req llm.Request, sr skillRequest, r steward.ToolResult) llm.Response {
	var found struct {
		Skills []steward.SkillMatch `json:"skills"`
	}
	b, _ := json.Marshal(decode(r.Output))
	_ = json.Unmarshal(b, &found)
	switch {
	case r.IsError:
		return text(fmt.Sprintf("I could not look for a skill: %s.", why(decode(r.Output))))
	case len(found.Skills) == 0:
		return text(fmt.Sprintf("I found no skill for “%s”.", sr.skill))
	case !sr.useIt:
		lines := []string{fmt.Sprintf("Skills for “%s”:", sr.skill)}
		for _, s := range found.Skills {
			lines = append(lines, fmt.Sprintf("- %s (%s, risk %s): %s", s.Name, s.Origin, s.RiskLevel, s.Description))
		}
		return text(strings.Join(lines, "\n"))
	case !declared(req.Tools, "use_skill"):
		return text("I found the skill " + found.Skills[0].Name + ", but use_skill is not available right now.")
	}
	args, _ := json.Marshal(map[string]string{"id": found.Skills[0].ID})
	return calls(req.Messages, call{"use_skill", args})
}

// playbook is use_skill's output as the demo reads it.
type playbook struct {
	Name    string `json:"name"`
	Origin  string `json:"origin"`
	Trusted bool   `json:"trusted"`
	Text    string `json:"playbook"`
}

// usedPlaybook finds the turn's last use_skill result: the playbook being followed.
func usedPlaybook(msgs []steward.Message) (playbook, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, r := range toolResults(msgs[i]) {
			if p, ok := readPlaybook(r); ok {
				return p, true
			}
		}
		if msgs[i].Role == steward.RoleUser && len(toolResults(msgs[i])) == 0 {
			break
		}
	}
	return playbook{}, false
}

// readPlaybook reads a use_skill result; only one the loop passed as instructions is
// trusted (§3).
func readPlaybook(r steward.ToolResult) (playbook, bool) {
	var p playbook
	if r.Name != "use_skill" || r.IsError {
		return p, false
	}
	b, _ := json.Marshal(decode(r.Output))
	if json.Unmarshal(b, &p) != nil || p.Name == "" {
		return p, false
	}
	p.Trusted = p.Trusted && r.Instructions
	return p, true
}

// afterUse follows a trusted playbook with the tools it names, or reads an outside one as
// data and follows none of it.
func afterUse(req llm.Request, sr skillRequest, r steward.ToolResult, now time.Time) llm.Response {
	if r.IsError {
		return text(fmt.Sprintf("I could not use the skill: %s.", why(decode(r.Output))))
	}
	p, ok := readPlaybook(r)
	if !ok {
		return text("The skill gave no playbook.")
	}
	if !p.Trusted {
		return text(fmt.Sprintf("The skill “%s” comes from outside, so I read its playbook as information, not as instructions, "+
			"and did nothing it asks. It says: %s", p.Name, clipText(p.Text, 300)))
	}
	var cs []call
	for _, c := range skillCalls(p.Name, sr.material, now) {
		if declared(req.Tools, c.tool) {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return text(skillAnswer(p, sr, nil, req.Messages, now))
	}
	return calls(req.Messages, cs...)
}

// call is one tool call the demo makes.
type call struct {
	tool string
	args json.RawMessage
}

// calls is a response making cs, with ids that do not repeat in the conversation.
func calls(msgs []steward.Message, cs ...call) llm.Response {
	n := countCalls(msgs)
	parts := make([]steward.Part, len(cs))
	for i, c := range cs {
		parts[i].ToolCall = &steward.ToolCall{ID: fmt.Sprintf("demo_%d", n+i+1), Name: c.tool, Args: c.args}
	}
	return llm.Response{Message: steward.Message{Role: steward.RoleModel, Parts: parts}, Finish: llm.FinishToolCalls}
}

// args marshals a map of arguments.
func args(m map[string]any) json.RawMessage {
	b, _ := json.Marshal(m) // maps of strings always marshal
	return b
}

// skillCalls are the tools a built-in playbook names, with their arguments.
func skillCalls(name, material string, now time.Time) []call {
	day := now.Format(time.DateOnly)
	switch name {
	case "meeting-notes":
		var cs []call
		for _, a := range parseMeeting(material, now).actions {
			m := map[string]any{"title": a.title()}
			if a.due != "" {
				m["due"] = a.due
			}
			cs = append(cs, call{"create_task", args(m)})
		}
		return cs
	case "morning-briefing":
		return []call{{"get_current_time", args(map[string]any{})}, {"list_tasks", args(map[string]any{"status": "open"})}}
	case "weekly-review":
		return []call{{"get_current_time", args(map[string]any{})}, {"list_tasks", args(map[string]any{"status": "all"})}}
	case "monthly-budget-review":
		first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, now.Location()).Format(time.DateOnly)
		return []call{{"budget_status", args(map[string]any{})}, {"ledger_report", args(map[string]any{"from": first, "to": day, "by": "category"})},
			{"find_subscriptions", args(map[string]any{})}, {"find_anomalies", args(map[string]any{})}}
	case "trip-planning":
		dest := strings.TrimSpace(strings.SplitN(material, ",", 2)[0])
		if dest == "" {
			dest = "the trip"
		}
		due := func(days int) string { return now.AddDate(0, 0, days).Format(time.DateOnly) }
		return []call{
			{"create_task", args(map[string]any{"title": "Book transport to " + dest, "due": due(14)})},
			{"create_task", args(map[string]any{"title": "Book the stay in " + dest, "due": due(14)})},
			{"create_task", args(map[string]any{"title": "Check the passport's expiry date", "due": due(7)})},
		}
	}
	return nil
}

// skillAnswer is the final answer of a followed playbook, from its tools' results.
func skillAnswer(p playbook, sr skillRequest, results []steward.ToolResult, msgs []steward.Message, now time.Time) string {
	var b strings.Builder
	if p.Name == "meeting-notes" {
		m := parseMeeting(sr.material, now)
		b.WriteString(m.answer())
	} else {
		fmt.Fprintf(&b, "Following the %s skill:", p.Name)
		if len(results) == 0 {
			fmt.Fprintf(&b, " its playbook says: %s", clipText(p.Text, 400))
		}
	}
	if len(results) > 0 {
		b.WriteString("\n\n" + summarise(results, msgs))
	}
	return b.String()
}

// clipText cuts s to n characters, on one line.
func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// meeting is what the demo makes of a transcript.
type meeting struct {
	people    []string
	decisions []string
	actions   []actionItem
}

// actionItem is a commitment: what, who, by when (YYYY-MM-DD, "" for no date).
type actionItem struct {
	action, owner, due string
}

// title is the task's title: the action and its owner.
func (a actionItem) title() string {
	return clipText(a.action, 160) + " (owner: " + a.owner + ")"
}

var (
	speakerRE  = regexp.MustCompile(`(?:^|[\s.!?])([A-Z][a-zA-Z]+):\s`)
	sentenceRE = regexp.MustCompile(`[^.!?]+[.!?]?`)
	selfRE     = regexp.MustCompile(`(?i)\b(?:i'll|i will|i'm going to|i am going to|i can)\s+(.+)`)
	namedRE    = regexp.MustCompile(`\b([A-Z][a-z]+)\s+(?:will|is going to)\s+(.+)`)
	askedRE    = regexp.MustCompile(`\b([A-Z][a-z]+),?\s+(?:[Cc]an|[Cc]ould|[Ww]ill) you\s+(.+)`)
	decisionRE = regexp.MustCompile(`(?i)\b(?:we agreed|agreed to|we decided|decided to|we'll go with|we will go with|let's go with|decision:)`)
	dueRE      = regexp.MustCompile(`(?i)\s*\b(?:by|on|before|due)\s+(today|tonight|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|next week|the end of the week|end of the week|end of week|the end of the month|end of the month|end of month|\d{4}-\d{2}-\d{2})\b`)
)

// notNames are capitalised words that start a sentence, not a person.
var notNames = map[string]bool{"We": true, "It": true, "That": true, "This": true, "They": true, "There": true, "She": true, "He": true, "You": true, "I": true}

// parseMeeting reads "Name: words" turns of a transcript into decisions and action items.
func parseMeeting(transcript string, now time.Time) meeting {
	var m meeting
	seen := map[string]bool{}
	locs := speakerRE.FindAllStringSubmatchIndex(transcript, -1)
	for i, loc := range locs {
		speaker := transcript[loc[2]:loc[3]]
		end := len(transcript)
		if i+1 < len(locs) {
			end = locs[i+1][0] + 1
		}
		if !seen[speaker] {
			seen[speaker] = true
			m.people = append(m.people, speaker)
		}
		for _, sentence := range sentenceRE.FindAllString(transcript[loc[1]:min(end, len(transcript))], -1) {
			sentence = strings.TrimSpace(sentence)
			if sentence == "" {
				continue
			}
			if decisionRE.MatchString(sentence) {
				m.decisions = append(m.decisions, strings.TrimRight(sentence, ".!"))
			}
			if a, ok := actionIn(sentence, speaker, now); ok {
				m.actions = append(m.actions, a)
			}
		}
	}
	return m
}

// actionIn finds a commitment in a sentence said by speaker.
func actionIn(sentence, speaker string, now time.Time) (actionItem, bool) {
	var a actionItem
	if s := selfRE.FindStringSubmatch(sentence); s != nil {
		a = actionItem{action: s[1], owner: speaker}
	} else if s := askedRE.FindStringSubmatch(sentence); s != nil && !notNames[s[1]] {
		a = actionItem{action: s[2], owner: s[1]}
	} else if s := namedRE.FindStringSubmatch(sentence); s != nil && !notNames[s[1]] {
		a = actionItem{action: s[2], owner: s[1]}
	} else {
		return a, false
	}
	if d := dueRE.FindStringSubmatch(a.action); d != nil {
		a.due = resolveDay(strings.ToLower(d[1]), now)
		a.action = dueRE.ReplaceAllString(a.action, "")
	}
	a.action = strings.TrimRight(strings.TrimSpace(a.action), ".!?")
	if a.action == "" {
		return a, false
	}
	a.action = strings.ToUpper(a.action[:1]) + a.action[1:]
	return a, true
}

// resolveDay turns "friday", "tomorrow", "end of the month" into a date after now.
func resolveDay(s string, now time.Time) string {
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	weekdays := []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
	switch {
	case s == "today" || s == "tonight":
	case s == "tomorrow":
		day = day.AddDate(0, 0, 1)
	case strings.Contains(s, "week") && strings.HasPrefix(s, "next"):
		day = day.AddDate(0, 0, 7-int(day.Weekday())+1) // next Monday
	case strings.Contains(s, "week"):
		day = day.AddDate(0, 0, (int(time.Friday)-int(day.Weekday())+7)%7)
	case strings.Contains(s, "month"):
		day = time.Date(day.Year(), day.Month()+1, 0, 0, 0, 0, 0, day.Location())
	case len(s) == 10 && s[4] == '-':
		return s
	default:
		for i, w := range weekdays {
			if w == s {
				ahead := (i - int(day.Weekday()) + 7) % 7
				if ahead == 0 {
					ahead = 7
				}
				day = day.AddDate(0, 0, ahead)
			}
		}
	}
	return day.Format(time.DateOnly)
}

// answer words the meeting: summary, decisions, action items with owners and dates.
func (m meeting) answer() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Summary\n\nA meeting of %s: %s and %s.\n\n### Decisions\n\n", joinNames(m.people),
		countOf(len(m.decisions), "decision"), countOf(len(m.actions), "action item"))
	if len(m.decisions) == 0 {
		b.WriteString("No decisions recorded.\n")
	}
	for _, d := range m.decisions {
		b.WriteString("- " + d + "\n")
	}
	b.WriteString("\n### Action items\n\n")
	if len(m.actions) == 0 {
		b.WriteString("No action items.\n")
	}
	for _, a := range m.actions {
		due := a.due
		if due == "" {
			due = "no date"
		}
		fmt.Fprintf(&b, "- %s — owner: %s — due: %s\n", a.action, a.owner, due)
	}
	return strings.TrimRight(b.String(), "\n")
}

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "unnamed speakers"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
