package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/steward"
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

// uploadDocument stores a document: POST /v1/documents?name=NAME with the file's bytes as
// the raw body and its Content-Type (application/octet-stream or none: the name's extension
// decides) → 201 {document}. A type Steward does not read is 415, a body over the limit 413,
// an encrypted, corrupt or empty document 422; nothing is stored then.
func (a *api) uploadDocument(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.documentsService(w, r)
	if !ok {
		return
	}
	name, declared := r.URL.Query().Get("name"), r.Header.Get("Content-Type")
	if name != "" && document.TypeOf(name, declared) == "" {
		fail(w, r, errorf(http.StatusUnsupportedMediaType, steward.CodeInvalid,
			"%q (%s) is not a type Steward reads: PDF, DOCX, XLSX, CSV, TXT, Markdown or HTML", name, declared))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if tooBig, ok := errors.AsType[*http.MaxBytesError](err); ok {
			fail(w, r, errorf(http.StatusRequestEntityTooLarge, steward.CodeTooLarge, "the document is larger than %d bytes", tooBig.Limit))
			return
		}
		fail(w, r, errorf(http.StatusBadRequest, steward.CodeInvalid, "could not read the request body"))
		return
	}
	doc, err := svc.Upload(r.Context(), principal(r.Context()).OwnerID, name, declared, body)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"document": doc})
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
