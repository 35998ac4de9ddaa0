package webapp

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/upload"
)

// previewChars is how much of a document's extracted text its page shows.
const previewChars = 4000

// documentsPage lists the owner's documents, with the upload form.
func (a *web) documentsPage(w http.ResponseWriter, r *http.Request) {
	a.documents(w, r, http.StatusOK, "")
}

func (a *web) documents(w http.ResponseWriter, r *http.Request, status int, msg string) {
	me := current(r)
	if a.d.Documents == nil {
		a.write(w, r, "documents", http.StatusOK, func(p *page) {
			p.raw(`<h1>Documents</h1><p>Documents are off on this server.</p>`)
		})
		return
	}
	docs, err := a.d.Documents.List(r.Context(), me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "documents", status, func(p *page) {
		p.raw(`<h1>Documents</h1>`).pageError(r, msg, "/documents")
		// The CSRF field comes first: the upload handler reads it before the file. A refused
		// upload says why inside the form.
		p.raw(`<h2>Upload</h2><form method="post" action="/documents" enctype="multipart/form-data" class="upload">`).hidden(me.csrf).
			formError(r, "/documents", msg).
			raw(`<label for="file">PDF, DOCX, XLSX, CSV, TXT, Markdown, HTML or a picture (up to `).text(fmt.Sprintf("%d MB", a.d.Documents.Limit()>>20)).
			raw(`)</label><input id="file" name="file" type="file" required accept=".pdf,.docx,.xlsx,.csv,.txt,.md,.markdown,.html,.htm,.jpg,.jpeg,.png,.gif">` +
				`<button type="submit">Upload</button></form>`)
		p.raw(`<h2>Your documents</h2>`)
		if len(docs) == 0 {
			p.raw(`<p>No documents yet.</p>`)
		}
		p.raw(`<ul class="documents">`)
		for _, d := range docs {
			id := d.ID.String()
			p.raw(`<li><span><a href="/documents/`).text(id).raw(`">`).text(d.Name).raw(`</a> <span class="meta">`).
				text(d.ContentType).raw(` · `).text(size(d.Size)).raw(` · `).text(d.Source).raw(` · `).text(when(d.CreatedAt)).raw(`</span></span>`).
				raw(`<a href="/documents/`).text(id).raw(`/content" download>Download</a>`).
				raw(`<form method="post" action="/documents/`).text(id).raw(`/delete">`).hidden(me.csrf).
				raw(`<button type="submit">Delete</button></form></li>`)
		}
		p.raw(`</ul>`)
	})
}

// documentPage previews a document: its metadata and the first page of its extracted text.
func (a *web) documentPage(w http.ResponseWriter, r *http.Request) {
	id, ok := a.documentID(w, r)
	if !ok {
		return
	}
	me := current(r)
	doc, err := a.d.Documents.Read(r.Context(), me.OwnerID, id, 0, previewChars)
	if err != nil {
		a.done(w, r, err, "/documents", a.documentsAgain(w, r))
		return
	}
	a.write(w, r, "documents", http.StatusOK, func(p *page) {
		d := doc.Document
		p.raw(`<h1>`).text(d.Name).raw(`</h1><p class="meta">`).text(d.ContentType).raw(` · `).text(size(d.Size)).
			raw(` · `).text(fmt.Sprintf("%d characters of text", d.TextChars)).raw(` · `).text(when(d.CreatedAt)).raw(`</p>`).
			raw(`<p><a href="/documents/`).text(d.ID.String()).raw(`/content" download>Download the original</a> · <a href="/documents">All documents</a></p>`).
			raw(`<h2>Extracted text</h2><pre class="preview">`).text(doc.Text).raw(`</pre>`)
		if doc.NextOffset > 0 {
			p.raw(`<p class="meta">The preview shows the first `).text(fmt.Sprint(previewChars)).raw(` characters.</p>`)
		}
		p.raw(`<form method="post" action="/documents/`).text(d.ID.String()).raw(`/delete">`).hidden(me.csrf).
			raw(`<button type="submit">Delete</button></form>`)
	})
}

// documentContent downloads a document's original bytes (an attachment, never rendered).
func (a *web) documentContent(w http.ResponseWriter, r *http.Request) {
	id, ok := a.documentID(w, r)
	if !ok {
		return
	}
	f, err := a.d.Documents.Content(r.Context(), current(r).OwnerID, id)
	if err != nil {
		a.done(w, r, err, "/documents", a.documentsAgain(w, r))
		return
	}
	document.ServeFile(w, f)
}

// uploadDocument stores the file of the upload form. The form is multipart, so the CSRF
// token is checked here, as its first part, before the file is read: a missing or wrong
// token is 403 and nothing is stored. The upload then takes its place among the uploads in
// flight (docs/ARCHITECTURE.md §12) and its file is spooled for the reader.
func (a *web) uploadDocument(w http.ResponseWriter, r *http.Request) {
	if a.d.Documents == nil {
		http.NotFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.d.Documents.Limit()+64<<10)
	mr, ok := formWithToken(w, r)
	if !ok {
		return
	}
	owner := current(r).OwnerID
	release, err := a.d.Uploads.Admit(owner)
	if err != nil {
		a.done(w, r, err, "/documents", a.documentsAgain(w, r))
		return
	}
	defer release()
	part, err := mr.NextPart()
	for err == nil && part.FormName() != "file" {
		part, err = mr.NextPart()
	}
	if err != nil {
		a.documents(w, r, http.StatusBadRequest, "Choose a file to upload.")
		return
	}
	f, err := upload.Spool(part)
	if err == nil {
		defer f.Close()
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok || err == nil && f.Size() > a.d.Documents.Limit() {
		a.documents(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("The file is larger than %d bytes.", a.d.Documents.Limit()))
		return
	}
	if err != nil {
		a.documents(w, r, http.StatusBadRequest, "The upload was cut off; try again.")
		return
	}
	_, err = a.d.Documents.UploadFile(r.Context(), owner, part.FileName(), part.Header.Get("Content-Type"), f, f.Size())
	a.done(w, r, err, "/documents", a.documentsAgain(w, r))
}

// formWithToken opens a multipart form whose first part is the session's CSRF token;
// without it (or with a wrong one) it answers 403 itself.
func formWithToken(w http.ResponseWriter, r *http.Request) (*multipart.Reader, bool) {
	mr, err := r.MultipartReader()
	if err != nil {
		http.Error(w, "send the upload form (multipart/form-data)", http.StatusBadRequest)
		return nil, false
	}
	part, err := mr.NextPart()
	var token []byte
	if err == nil && part.FormName() == "csrf" {
		token, _ = io.ReadAll(io.LimitReader(part, 256))
	}
	want := current(r).csrf
	if want == "" || subtle.ConstantTimeCompare(token, []byte(want)) != 1 {
		http.Error(w, "missing or stale CSRF token: reload the page", http.StatusForbidden)
		return nil, false
	}
	return mr, true
}

func (a *web) deleteDocument(w http.ResponseWriter, r *http.Request) {
	id, ok := a.documentID(w, r)
	if !ok {
		return
	}
	a.done(w, r, a.d.Documents.Delete(r.Context(), current(r).OwnerID, id), "/documents", a.documentsAgain(w, r))
}

// documentID is the {id} of a document route; 404 when documents are off or it is no UUID.
func (a *web) documentID(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if a.d.Documents == nil || err != nil {
		a.done(w, r, steward.ErrNotFound, "/documents", a.documentsAgain(w, r))
		return uuid.Nil, false
	}
	return id, true
}

func (a *web) documentsAgain(w http.ResponseWriter, r *http.Request) func(int, string) {
	return func(status int, msg string) { a.documents(w, r, status, msg) }
}

// size writes a byte count for people.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
