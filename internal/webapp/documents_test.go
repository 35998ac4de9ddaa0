package webapp_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/apptest"
)

// docWeb is the web app with documents, and a signed-in client per owner.
type docWeb struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

func docSite(t *testing.T) (alice, bob *docWeb) {
	t.Helper()
	e := apptest.New(t, apptest.Options{MaxConns: 6})
	o, srv := e.DB, e.Server
	signIn := func(name string) *docWeb {
		_, key := o.Owner(t, name)
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if a := signInAs(t, c, srv.URL, key); a.status != http.StatusSeeOther || !a.session() {
			t.Fatalf("sign in %s: %d %s", name, a.status, a.body)
		}
		w := &docWeb{t: t, base: srv.URL, c: c}
		_, body := w.get("/documents")
		m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no CSRF token on /documents:\n%s", body)
		}
		w.csrf = m[1]
		return w
	}
	return signIn("alice"), signIn("bob")
}

func (w *docWeb) get(path string) (*http.Response, string) {
	w.t.Helper()
	resp, err := w.c.Get(w.base + path)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// upload posts the page's upload form: the csrf field (if any) first, then the file.
func (w *docWeb) upload(csrf, filename, contentType string, data []byte) (*http.Response, string) {
	w.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if csrf != "" {
		_ = mw.WriteField("csrf", csrf)
	}
	if filename != "" {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + filename + `"`}
		h["Content-Type"] = []string{contentType}
		pw, _ := mw.CreatePart(h)
		_, _ = pw.Write(data)
	}
	_ = mw.Close()
	resp, err := w.c.Post(w.base+"/documents", mw.FormDataContentType(), &b)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestDocumentsPage: the Documents page (in the navigation) lists nothing, then the file
// uploaded through its form; the file's page previews its text and links the download, which
// returns the bytes as an attachment; bob gets 404 for all of it; delete removes it. An
// upload without the CSRF token, or without a file, stores nothing.
func TestDocumentsPage(t *testing.T) {
	t.Parallel()
	alice, bob := docSite(t)
	resp, body := alice.get("/documents")
	for _, want := range []string{`<a href="/documents" aria-current="page">Documents</a>`, "No documents yet.",
		`enctype="multipart/form-data"`, `name="file" type="file"`} {
		if resp.StatusCode != 200 || !strings.Contains(body, want) {
			t.Fatalf("/documents: %d, missing %q:\n%s", resp.StatusCode, want, body)
		}
	}
	notes := []byte("# Boiler\n\nThe boiler was serviced on 3 October; next service due in a year.\n")
	if resp, _ := alice.upload("", "boiler.md", "text/markdown", notes); resp.StatusCode != http.StatusForbidden {
		t.Errorf("upload without the CSRF token: %d; want 403", resp.StatusCode)
	}
	if resp, _ := alice.upload("wrong", "boiler.md", "text/markdown", notes); resp.StatusCode != http.StatusForbidden {
		t.Errorf("upload with a wrong CSRF token: %d; want 403", resp.StatusCode)
	}
	if resp, body := alice.upload(alice.csrf, "", "", nil); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Choose a file") {
		t.Errorf("upload without a file: %d; want 400 asking for a file", resp.StatusCode)
	}
	if resp, body := alice.upload(alice.csrf, "tool.exe", "application/x-msdownload", []byte("MZ")); resp.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(body, "not a type Steward reads") {
		t.Errorf("upload of an unknown type: %d; want 422 saying why:\n%s", resp.StatusCode, body)
	}
	if _, body := alice.get("/documents"); !strings.Contains(body, "No documents yet.") {
		t.Fatalf("refused uploads stored something:\n%s", body)
	}
	if resp, _ := alice.upload(alice.csrf, "boiler.md", "text/markdown", notes); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("upload: %d; want 303 back to /documents", resp.StatusCode)
	}
	_, body = alice.get("/documents")
	m := regexp.MustCompile(`<a href="/documents/([0-9a-f-]{36})">boiler.md</a>`).FindStringSubmatch(body)
	if m == nil || !strings.Contains(body, `<a href="/documents/`+m[1]+`/content" download>Download</a>`) {
		t.Fatalf("the list does not show boiler.md with a download link:\n%s", body)
	}
	id := m[1]
	if resp, body := alice.get("/documents/" + id); resp.StatusCode != 200 || !strings.Contains(body, "serviced on 3 October") {
		t.Fatalf("preview: %d\n%s", resp.StatusCode, body)
	}
	resp, got := alice.get("/documents/" + id + "/content")
	if resp.StatusCode != 200 || got != string(notes) || resp.Header.Get("Content-Disposition") != "attachment; filename=boiler.md" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("download: %d %v %q", resp.StatusCode, resp.Header, got)
	}
	for _, path := range []string{"/documents/" + id, "/documents/" + id + "/content"} {
		if resp, body := bob.get(path); resp.StatusCode != 404 || strings.Contains(body, "serviced") {
			t.Errorf("bob GET %s: %d; want 404", path, resp.StatusCode)
		}
	}
	resp, err := alice.c.PostForm(alice.base+"/documents/"+id+"/delete", url.Values{"csrf": {alice.csrf}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %v %v", resp, err)
	}
	resp.Body.Close()
	if resp, _ := alice.get("/documents/" + id + "/content"); resp.StatusCode != 404 {
		t.Errorf("download after delete: %d; want 404", resp.StatusCode)
	}
}
