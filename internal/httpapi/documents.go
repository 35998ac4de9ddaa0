package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/upload"
)

// documentLimit caps an upload's body: the documents' limit (STEWARD_MAX_DOCUMENT_BYTES).
func (a *api) documentLimit() int64 {
	if a.d.Documents == nil {
		return a.d.MaxBodyBytes
	}
	return a.d.Documents.Limit()
}

// documentsService is the documents service, or a 404 when none is configured.
func (a *api) documentsService(w http.ResponseWriter, r *http.Request) (*document.Service, bool) {
	if a.d.Documents == nil {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "documents are not configured on this server"))
		return nil, false
	}
	return a.d.Documents, true
}

// uploadDocument stores a document: POST /v1/documents with either a multipart/form-data
// body whose field "file" is the document (its filename the name, its part's Content-Type the
// declared type), or ?name=NAME with the file's bytes as the raw body and its Content-Type
// (application/octet-stream or none: the name's extension decides) → 201 {document}. A type
// Steward does not read is 415, a body over the limit 413, a multipart body without a file
// 400, an encrypted, corrupt or empty document 422; nothing is stored then. An upload past
// the uploads in flight (Deps.Uploads) is 429 before its body is read; the body is spooled to
// a temporary file, which the document reader reads (docs/ARCHITECTURE.md §12).
func (a *api) uploadDocument(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.documentsService(w, r)
	if !ok {
		return
	}
	owner := principal(r.Context()).OwnerID
	release, err := a.d.Uploads.Admit(owner)
	if err != nil {
		fail(w, r, err)
		return
	}
	defer release()
	name, declared, body, err := documentBody(r)
	var f *upload.File
	if err == nil {
		f, err = upload.Spool(body)
	}
	if err != nil {
		fail(w, r, uploadError(err))
		return
	}
	defer f.Close()
	doc, err := svc.UploadFile(r.Context(), owner, name, declared, f, f.Size())
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"document": doc})
}

// documentBody is an upload's name, declared type and bytes: the multipart part "file", or
// the raw body.
func documentBody(r *http.Request) (name, declared string, body io.Reader, err error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		return multipartFile(r)
	}
	name, declared = r.URL.Query().Get("name"), r.Header.Get("Content-Type")
	return name, declared, r.Body, checkDocumentType(name, declared)
}

// multipartFile finds the part named "file" of a multipart/form-data upload; other fields
// are skipped. Its filename is the document's name, its Content-Type the declared type.
func multipartFile(r *http.Request) (name, declared string, part io.Reader, err error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return "", "", nil, errorf(http.StatusBadRequest, steward.CodeInvalid, "the multipart body is malformed: %v", err)
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return "", "", nil, errorf(http.StatusBadRequest, steward.CodeInvalid, `the multipart body has no "file" field`)
		}
		if err != nil {
			return "", "", nil, err
		}
		if p.FormName() != "file" {
			continue
		}
		name, declared = p.FileName(), p.Header.Get("Content-Type")
		return name, declared, p, checkDocumentType(name, declared)
	}
}

// checkDocumentType refuses, before the body is read, a named upload of a type Steward does
// not read (415).
func checkDocumentType(name, declared string) error {
	if name != "" && doctext.TypeOf(name, declared) == "" && !mediaName(name, declared) {
		return errorf(http.StatusUnsupportedMediaType, steward.CodeInvalid,
			"%q (%s) is not a type Steward reads: PDF, DOCX, XLSX, CSV, TXT, Markdown or HTML", name, declared)
	}
	return nil
}

// uploadError turns a failure to read an upload's body into its 4xx: 413 past the limit,
// else 400 (a malformed or cut-off body); errors already decided pass through.
func uploadError(err error) error {
	if tooBig, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return errorf(http.StatusRequestEntityTooLarge, steward.CodeTooLarge, "the document is larger than %d bytes", tooBig.Limit)
	}
	if _, ok := errors.AsType[*httpError](err); ok {
		return err
	}
	return errorf(http.StatusBadRequest, steward.CodeInvalid, "could not read the request body: %v", err)
}

// documentContent returns a document's original bytes as an attachment:
// GET /v1/documents/{id}/content → 200 with the stored Content-Type.
func (a *api) documentContent(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.documentsService(w, r)
	if !ok {
		return
	}
	id, ok := pathID(w, r, "document")
	if !ok {
		return
	}
	f, err := svc.Content(r.Context(), principal(r.Context()).OwnerID, id)
	if err != nil {
		fail(w, r, err)
		return
	}
	document.ServeFile(w, f)
}

// documents lists the owner's documents, newest first: GET /v1/documents → {documents}.
func (a *api) documents(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.documentsService(w, r)
	if !ok {
		return
	}
	docs, err := svc.List(r.Context(), principal(r.Context()).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"documents": docs})
}

// document returns a document's metadata and a page of its extracted text:
// GET /v1/documents/{id}?offset=0&max_chars=20000 → {document, offset, text, next_offset?}.
func (a *api) document(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.documentsService(w, r)
	if !ok {
		return
	}
	id, ok := pathID(w, r, "document")
	if !ok {
		return
	}
	offset, err := queryInt(r, "offset")
	if err != nil {
		fail(w, r, err)
		return
	}
	maxChars, err := queryInt(r, "max_chars")
	if err != nil {
		fail(w, r, err)
		return
	}
	page, err := svc.Read(r.Context(), principal(r.Context()).OwnerID, id, offset, maxChars)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// deleteDocument deletes a document: DELETE /v1/documents/{id} → 204.
func (a *api) deleteDocument(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.documentsService(w, r)
	if !ok {
		return
	}
	id, ok := pathID(w, r, "document")
	if !ok {
		return
	}
	if err := svc.Delete(r.Context(), principal(r.Context()).OwnerID, id); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// queryInt reads an optional integer query parameter (0 when absent); anything else is 400.
func queryInt(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errorf(http.StatusBadRequest, steward.CodeInvalid, "%s must be an integer", name)
	}
	return n, nil
}

// mediaName reports whether an upload is named or declared a recording or a picture: the
// documents service sniffs its bytes, transcribes a recording when voice is configured (§18)
// and keeps a JPEG, PNG or GIF picture as it is.
func mediaName(name, declared string) bool {
	switch strings.ToLower(declared) {
	case "image/jpeg", "image/png", "image/gif":
		return true
	}
	if strings.HasPrefix(strings.ToLower(declared), "audio/") {
		return true
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".wav", ".ogg", ".oga", ".opus", ".webm", ".mp3", ".m4a", ".jpg", ".jpeg", ".png", ".gif":
		return true
	}
	return false
}
