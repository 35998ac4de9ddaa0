package webapp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
)

// Forms (docs/ARCHITECTURE.md §1, internal/webapp): a refused form is shown again with what the
// user typed and the refusal in words inside it, above its fields; a form that did what it
// was asked redirects (303), so a reload never sends it again, and what it has to say — a
// test message sent, a statement imported, a vote recorded — travels to the next page in a
// flash cookie that page reads once.

// posted reports whether r is the POST of the form at action (the page is shown again for it).
func posted(r *http.Request, action string) bool {
	return r.Method == http.MethodPost && r.URL.Path == action
}

// typed is what the user typed into field name of the form at action when r is that form's
// refused POST, else "". Never used for a secret (a password, a token): the user types it
// again rather than have it written back into the page.
func typed(r *http.Request, action, name string) string {
	if !posted(r, action) {
		return ""
	}
	return r.PostFormValue(name)
}

// value writes the value attribute of field name of the form at action: what the user typed
// when the form was refused, else def.
func (p *page) value(r *http.Request, action, name, def string) *page {
	v := def
	if posted(r, action) {
		v = r.PostFormValue(name)
	}
	if v == "" {
		return p
	}
	return p.raw(` value="`).text(v).raw(`"`)
}

// option writes an option of select name of the form at action, selected when the user chose
// it in the refused form, else when def says so.
func (p *page) option(r *http.Request, action, name, value, label string, def bool) *page {
	selected := def
	if posted(r, action) {
		selected = r.PostFormValue(name) == value
	}
	p.raw(`<option value="`).text(value).raw(`"`)
	if selected {
		p.raw(` selected`)
	}
	return p.raw(`>`).text(label).raw(`</option>`)
}

// checked writes the checked attribute of checkbox name when the user ticked it in the
// refused form at action.
func (p *page) checked(r *http.Request, action, name string) *page {
	if typed(r, action, name) != "" {
		p.raw(` checked`)
	}
	return p
}

// formError writes msg inside the form at action when r is its refused POST.
func (p *page) formError(r *http.Request, action, msg string) *page {
	if msg == "" || !posted(r, action) {
		return p
	}
	return p.raw(`<p role="alert" class="error">`).text(msg).raw(`</p>`)
}

// pageError writes msg at the top of the page, unless r is the POST of one of the page's
// forms with fields (actions), which show it themselves (formError).
func (p *page) pageError(r *http.Request, msg string, actions ...string) *page {
	if msg == "" || slices.ContainsFunc(actions, func(a string) bool { return posted(r, a) }) {
		return p
	}
	return p.raw(`<p role="alert" class="error">`).text(msg).raw(`</p>`)
}

// flash is what a page says once after a form's redirect: a title (may be empty), a text,
// lines of detail, and whether it is a failure.
type flash struct {
	Title string   `json:"title,omitempty"`
	Text  string   `json:"text"`
	Lines []string `json:"lines,omitempty"`
	Error bool     `json:"error,omitempty"`
}

// flashCookie carries a flash from a form's redirect to the page, which clears it.
const flashCookie = "steward_flash"

// maxFlash bounds a flash cookie's value (browsers keep cookies up to 4 KB).
const maxFlash = 3000

// redirectWith redirects (303) to the page at path, which shows f once. Lines that would make
// the cookie too large are dropped, with a last line saying how many.
func redirectWith(w http.ResponseWriter, r *http.Request, path string, f flash) {
	lines := f.Lines
	var v string
	for {
		b, _ := json.Marshal(f)
		if v = base64.RawURLEncoding.EncodeToString(b); len(v) <= maxFlash || len(lines) == 0 {
			break
		}
		lines = lines[:len(lines)*2/3]
		f.Lines = append(slices.Clip(lines), "… and more")
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: v, Path: path, MaxAge: 60,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// takeFlash returns the flash a redirect left for this page and clears it (a reload shows the
// page without it). A cookie that does not decode is no flash.
func takeFlash(w http.ResponseWriter, r *http.Request) (flash, bool) {
	c, err := r.Cookie(flashCookie)
	if err != nil || r.Method != http.MethodGet {
		return flash{}, false
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: r.URL.Path, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	var f flash
	b, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(c.Value) > maxFlash || json.Unmarshal(b, &f) != nil || f.Text == "" {
		return flash{}, false
	}
	return f, true
}

// show writes a flash: a status (an alert when it is a failure) with its title, text and lines.
func (f flash) show(p *page) {
	role, class := "status", "note"
	if f.Error {
		role, class = "alert", "error"
	}
	p.raw(`<section class="flash ` + class + `" role="` + role + `">`)
	if f.Title != "" {
		p.raw(`<h2>`).text(f.Title).raw(`</h2>`)
	}
	p.raw(`<p>`).text(f.Text).raw(`</p>`)
	if len(f.Lines) > 0 {
		p.raw(`<ul>`)
		for _, l := range f.Lines {
			p.raw(`<li>`).text(l).raw(`</li>`)
		}
		p.raw(`</ul>`)
	}
	p.raw(`</section>`)
}
