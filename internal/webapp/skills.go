package webapp

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/skillpack"
	"github.com/stewardhq/steward/internal/skills"
	"github.com/stewardhq/steward/internal/steward"
)

// The Skills page (docs/SKILLS.md): the built-in and the owner's skills with their scan
// findings and what each was used for; installing from a file or a URL stages the skill and
// shows its approval card (name, description, files, scan) before the owner's yes; a blocked
// skill runs only after the owner overrides it, knowingly (audited).

// skillsPage lists the skills, with the install forms.
func (a *web) skillsPage(w http.ResponseWriter, r *http.Request) {
	a.skillsList(w, r, http.StatusOK, "")
}

func (a *web) skillsList(w http.ResponseWriter, r *http.Request, status int, msg string) {
	me := current(r)
	if a.d.Skills == nil {
		a.write(w, r, "skills", http.StatusOK, func(p *page) { p.raw(`<h1>Skills</h1><p>Skills are off on this server.</p>`) })
		return
	}
	o, err := a.d.Skills.List(r.Context(), me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	f, hasFlash := takeFlash(w, r)
	a.write(w, r, "skills", status, func(p *page) {
		p.raw(`<h1>Skills</h1>`)
		if hasFlash {
			f.show(p)
		}
		p.pageError(r, msg, "/skills/url", "/skills/upload")
		p.raw(`<p class="meta">Playbooks Steward finds and follows for a kind of task. Built-in skills and the ones you wrote are ` +
			`instructions; a skill from anywhere else is read as information, never as orders, and every write still waits for you.</p>`)
		var builtin, own []steward.Skill
		for _, sk := range o.Skills {
			if sk.Origin == steward.SkillBuiltin {
				builtin = append(builtin, sk)
			} else {
				own = append(own, sk)
			}
		}
		p.raw(`<h2>Yours</h2>`)
		if len(own) == 0 {
			p.raw(`<p>No skills of your own yet.</p>`)
		}
		skillList(p, own, o.Uses)
		p.raw(`<h2>Built in</h2>`)
		skillList(p, builtin, o.Uses)
		installForms(p, r, me.csrf, msg)
		p.raw(`<h2>Recently used</h2>`)
		usesList(p, o.Uses, "")
	})
}

// installForms writes the two ways to install: a file (multipart: the CSRF field first, read
// before the file) and an https URL.
func installForms(p *page, r *http.Request, csrf, msg string) {
	p.raw(`<h2>Install a skill</h2><form method="post" action="/skills/upload" enctype="multipart/form-data" class="upload">`).hidden(csrf).
		formError(r, "/skills/upload", msg).
		raw(`<label for="skill-file">A zip or tar.gz holding SKILL.md, or a SKILL.md (up to `).text(fmt.Sprintf("%d KB", skillpack.MaxArchiveBytes>>10)).
		raw(`)</label><input id="skill-file" name="file" type="file" required accept=".zip,.gz,.tgz,.md">` +
			`<label class="check"><input type="checkbox" name="own" value="true"> I wrote this skill myself (follow it as instructions)</label>` +
			`<button type="submit">Read and scan</button></form>`)
	p.raw(`<form method="post" action="/skills/url" class="upload">`).hidden(csrf).formError(r, "/skills/url", msg).
		raw(`<label for="skill-url">Or an https URL of one (a GitHub tarball works)</label>`+
			`<input id="skill-url" name="url" type="url" inputmode="url" placeholder="https://" required`).value(r, "/skills/url", "url", "").
		raw(`><button type="submit">Fetch and scan</button></form>`)
}

// skillList writes skills as a list: name, version, where from, status, what the scan found.
func skillList(p *page, list []steward.Skill, uses []steward.SkillUse) {
	if len(list) == 0 {
		return
	}
	p.raw(`<ul class="skills">`)
	for _, sk := range list {
		n := 0
		for _, u := range uses {
			if u.SkillID == sk.ID {
				n++
			}
		}
		p.raw(`<li><a href="/skills/`).text(sk.ID).raw(`">`).text(sk.Name).raw(`</a>`)
		if sk.Version != "" {
			p.raw(` <span class="meta">`).text(sk.Version).raw(`</span>`)
		}
		p.raw(` <span class="state `).text(stateClass(sk)).raw(`">`).text(stateWords(sk)).raw(`</span>`).
			raw(`<p>`).text(steward.Visible(sk.Description)).raw(`</p><p class="meta">`).text(originWords(sk.Origin)).
			raw(` · `).text(findingsWords(sk))
		if n > 0 {
			p.raw(` · used `).text(countWords(n, "time"))
		}
		p.raw(`</p></li>`)
	}
	p.raw(`</ul>`)
}

// usesList writes what skills were used for: the owner's words of each turn, linked to its
// story.
func usesList(p *page, uses []steward.SkillUse, only string) {
	var shown int
	p.raw(`<ul class="uses">`)
	for _, u := range uses {
		if only != "" && u.SkillID != only {
			continue
		}
		shown++
		asked := u.Asked
		if asked == "" {
			asked = "(no message)"
		}
		p.raw(`<li><a href="/turns/`).text(u.TurnID.String()).raw(`">`).text(steward.Visible(clipWords(asked, 120))).raw(`</a> <span class="meta">`).
			text(u.Name)
		if u.Version != "" {
			p.raw(` `).text(u.Version)
		}
		p.raw(` · `).text(when(u.At)).raw(`</span></li>`)
	}
	p.raw(`</ul>`)
	if shown == 0 {
		p.raw(`<p>Not used yet.</p>`)
	}
}

// stateWords and stateClass say where a skill stands.
func stateWords(sk steward.Skill) string {
	switch {
	case sk.Status == steward.SkillStaged:
		return "Waiting for your yes"
	case sk.Status == steward.SkillBlocked && sk.OverriddenAt == nil:
		return "Blocked by its scan"
	case !sk.Enabled:
		return "Off"
	case sk.Status == steward.SkillBlocked:
		return "On (you overrode its scan)"
	}
	return "On"
}

func stateClass(sk steward.Skill) string {
	switch {
	case sk.Status == steward.SkillBlocked && sk.OverriddenAt == nil:
		return "blocked"
	case sk.Status == steward.SkillStaged:
		return "staged"
	case !sk.Enabled:
		return "off"
	case sk.Status == steward.SkillBlocked:
		return "overridden"
	}
	return "on"
}

func originWords(origin string) string {
	switch origin {
	case steward.SkillBuiltin:
		return "built in"
	case steward.SkillOwn:
		return "yours (instructions)"
	}
	return "from outside (read as data)"
}

func findingsWords(sk steward.Skill) string {
	if len(sk.Findings) == 0 {
		return "scan: no findings"
	}
	return fmt.Sprintf("scan: %s, the worst %s", countWords(len(sk.Findings), "finding"), sk.Worst)
}

func countWords(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func clipWords(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// skillPage shows one skill: what it is, its files, its findings, what it was used for; a
// staged skill's approval card; a blocked skill's override.
func (a *web) skillPage(w http.ResponseWriter, r *http.Request) {
	a.skill(w, r, http.StatusOK, "")
}

func (a *web) skill(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if a.d.Skills == nil {
		a.notFound(w, r)
		return
	}
	me := current(r)
	id := chi.URLParam(r, "id")
	sk, err := a.d.Skills.Get(r.Context(), me.OwnerID, id)
	if err != nil {
		a.done(w, r, err, "/skills", a.skillsAgain(w, r))
		return
	}
	o, err := a.d.Skills.List(r.Context(), me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	f, hasFlash := takeFlash(w, r)
	a.write(w, r, "skills", status, func(p *page) {
		action := "/skills/" + sk.ID
		p.raw(`<h1>`).text(sk.Name).raw(`</h1>`)
		if hasFlash {
			f.show(p)
		}
		p.pageError(r, msg, action+"/override")
		p.raw(`<p>`).text(steward.Visible(sk.Description)).raw(`</p><dl class="fields">`)
		for _, kv := range [][2]string{{"Status", stateWords(sk)}, {"Version", orNone(sk.Version)}, {"Origin", originWords(sk.Origin)},
			{"From", sk.Source}, {"Risk level", sk.RiskLevel}, {"Tools it names", orNone(strings.Join(sk.RequiredTools, ", "))},
			{"SHA-256", short(sk.SHA256)}} {
			p.raw(`<div><dt>`).text(kv[0]).raw(`</dt><dd>`).text(steward.Visible(kv[1])).raw(`</dd></div>`)
		}
		p.raw(`</dl><h2>Files</h2><ul class="files">`)
		for _, fl := range sk.Files {
			p.raw(`<li><code>`).text(steward.Visible(fl.Path)).raw(`</code> <span class="meta">`).text(size(fl.Size)).raw(`</span></li>`)
		}
		p.raw(`</ul><h2>Scan</h2>`)
		findingsList(p, sk.Findings)
		switch {
		case sk.Status == steward.SkillStaged:
			p.raw(`<form method="post" action="`).text(action).raw(`/install" class="approval-card" aria-label="Install this skill?">`).hidden(me.csrf).
				raw(`<p class="ask"><strong>Install this skill?</strong> `)
			if sk.Worst >= steward.SeverityHigh {
				p.raw(`Its scan found something at `).text(sk.Worst.String()).raw(`: installed, it stays blocked until you override it.`)
			} else {
				p.raw(`Steward will offer it when a task fits its description.`)
			}
			p.raw(`</p><div class="buttons"><button type="submit">Install</button>` +
				`<button type="submit" formaction="`).text(action).raw(`/delete" class="quiet">Discard</button></div></form>`)
		case sk.Status == steward.SkillBlocked && sk.OverriddenAt == nil:
			p.raw(`<form method="post" action="`).text(action).raw(`/override" class="override">`).hidden(me.csrf).formError(r, action+"/override", msg).
				raw(`<p><strong>Blocked.</strong> Its scan found something at `).text(sk.Worst.String()).
				raw(`. If you trust it anyway, you can let it run; whatever it says, writes still wait for your approval.</p>`+
					`<label class="check"><input type="checkbox" name="confirm" value="yes" required`).checked(r, action+"/override", "confirm").
				raw(`> I have read the findings and want this skill to run anyway</label><button type="submit">Override and turn on</button></form>`)
		default:
			p.raw(`<form method="post" action="`).text(action)
			if sk.Enabled {
				p.raw(`/disable">`).hidden(me.csrf).raw(`<button type="submit">Turn off</button></form>`)
			} else {
				p.raw(`/enable">`).hidden(me.csrf).raw(`<button type="submit">Turn on</button></form>`)
			}
		}
		if sk.Origin != steward.SkillBuiltin && sk.Status != steward.SkillStaged {
			p.raw(`<form method="post" action="`).text(action).raw(`/delete">`).hidden(me.csrf).raw(`<button type="submit" class="quiet">Remove</button></form>`)
		}
		if sk.Status != steward.SkillStaged {
			p.raw(`<h2>Used for</h2>`)
			usesList(p, o.Uses, sk.ID)
		}
		p.raw(`<p><a href="/skills">All skills</a></p>`)
	})
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// findingsList writes the scan's findings, worst first as the scanner found them.
func findingsList(p *page, findings []steward.SkillFinding) {
	if len(findings) == 0 {
		p.raw(`<p>No findings.</p>`)
		return
	}
	p.raw(`<ul class="findings">`)
	for _, f := range findings {
		p.raw(`<li class="sev-`).text(f.Severity.String()).raw(`"><strong>`).text(f.Severity.String()).raw(`</strong> `).
			text(strings.ReplaceAll(f.Rule, "_", " ")).raw(` in <code>`).text(steward.Visible(f.Path)).raw(`</code> line `).
			text(fmt.Sprint(f.Line)).raw(`: `).text(f.Why).raw(`<br><q>`).text(steward.Visible(f.Excerpt)).raw(`</q></li>`)
	}
	p.raw(`</ul>`)
}

// uploadSkill stages the file of the upload form and shows its card. The form is multipart,
// so the CSRF token is checked here, as its first part, before the file is read.
func (a *web) uploadSkill(w http.ResponseWriter, r *http.Request) {
	if a.d.Skills == nil {
		http.NotFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, skillpack.MaxArchiveBytes+64<<10)
	mr, ok := formWithToken(w, r)
	if !ok {
		return
	}
	var src skills.Source
	var err error
	for {
		var part *multipart.Part
		part, err = mr.NextPart()
		if err != nil {
			break
		}
		switch part.FormName() {
		case "file":
			src.FileName = part.FileName()
			src.Archive, err = io.ReadAll(part)
		case "own":
			src.Own = true
		}
		if err != nil {
			break
		}
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		a.skillsList(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("The file is larger than %d KB.", skillpack.MaxArchiveBytes>>10))
		return
	}
	if err != nil && err != io.EOF {
		a.skillsList(w, r, http.StatusBadRequest, "The upload was cut off; try again.")
		return
	}
	if len(src.Archive) == 0 {
		a.skillsList(w, r, http.StatusBadRequest, "Choose a file to install.")
		return
	}
	a.stage(w, r, src)
}

// fetchSkill stages the skill at the form's https URL and shows its card.
func (a *web) fetchSkill(w http.ResponseWriter, r *http.Request) {
	if a.d.Skills == nil {
		http.NotFound(w, r)
		return
	}
	a.stage(w, r, skills.Source{URL: strings.TrimSpace(r.PostFormValue("url"))})
}

// stage reads, checks and scans a skill and redirects to its card; a refusal is shown in
// the form, with its reasons.
func (a *web) stage(w http.ResponseWriter, r *http.Request, src skills.Source) {
	sk, err := a.d.Skills.Stage(r.Context(), current(r).OwnerID, src, nil, "")
	if err != nil {
		a.done(w, r, err, "/skills", a.skillsAgain(w, r))
		return
	}
	redirectWith(w, r, "/skills/"+sk.ID, flash{Title: "Read and scanned", Text: "Nothing is installed yet: check what it is and what the scan found, then say yes or discard it."})
}

// installSkill is the owner's yes to a staged skill.
func (a *web) installSkill(w http.ResponseWriter, r *http.Request) {
	id, ok := a.skillID(w, r)
	if !ok {
		return
	}
	sk, err := a.d.Skills.Install(r.Context(), current(r).OwnerID, id)
	if err != nil {
		a.done(w, r, err, "/skills", a.skillsAgain(w, r))
		return
	}
	f := flash{Text: "Installed " + sk.Name + "."}
	if sk.Status == steward.SkillBlocked {
		f = flash{Text: "Installed " + sk.Name + ", but blocked by its scan: it stays off unless you override it.", Error: true}
	}
	redirectWith(w, r, "/skills/"+sk.ID, f)
}

// overrideSkill lets a blocked skill run; the box must be ticked.
func (a *web) overrideSkill(w http.ResponseWriter, r *http.Request) {
	id, ok := a.skillID(w, r)
	if !ok {
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		a.skill(w, r, http.StatusUnprocessableEntity, "Tick the box to say you read the findings.")
		return
	}
	sk, err := a.d.Skills.Override(r.Context(), current(r).OwnerID, id, "web")
	if err != nil {
		a.done(w, r, err, "/skills", a.skillsAgain(w, r))
		return
	}
	redirectWith(w, r, "/skills/"+sk.ID, flash{Text: "Overridden: " + sk.Name + " is on. Writes it leads to still wait for your approval."})
}

// setSkill turns a skill on or off (a built-in too).
func (a *web) setSkill(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.d.Skills == nil {
			http.NotFound(w, r)
			return
		}
		id := chi.URLParam(r, "id")
		_, err := a.d.Skills.SetEnabled(r.Context(), current(r).OwnerID, id, on)
		a.done(w, r, err, "/skills/"+id, func(status int, msg string) { a.skill(w, r, status, msg) })
	}
}

// deleteSkill removes (or discards) one of the owner's skills.
func (a *web) deleteSkill(w http.ResponseWriter, r *http.Request) {
	if a.d.Skills == nil {
		http.NotFound(w, r)
		return
	}
	err := a.d.Skills.Delete(r.Context(), current(r).OwnerID, chi.URLParam(r, "id"))
	if err != nil {
		a.done(w, r, err, "/skills", a.skillsAgain(w, r))
		return
	}
	redirectWith(w, r, "/skills", flash{Text: "Removed."})
}

// skillID is the {id} of an owner's skill route.
func (a *web) skillID(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if a.d.Skills == nil || err != nil {
		a.done(w, r, steward.ErrNotFound, "/skills", a.skillsAgain(w, r))
		return uuid.Nil, false
	}
	return id, true
}

func (a *web) skillsAgain(w http.ResponseWriter, r *http.Request) func(int, string) {
	return func(status int, msg string) { a.skillsList(w, r, status, msg) }
}
