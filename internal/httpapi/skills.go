package httpapi

import (
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/skillpack"
	"github.com/stewardhq/steward/internal/skills"
	"github.com/stewardhq/steward/internal/steward"
)

// skillUploadLimit caps POST /v1/skills: an archive at its bound, with room for the
// multipart envelope.
const skillUploadLimit = skillpack.MaxArchiveBytes + 64<<10

// listSkills lists the built-in and the owner's skills with the latest uses:
// GET /v1/skills → {skills, uses}.
func (a *api) listSkills(w http.ResponseWriter, r *http.Request) {
	o, err := a.d.Skills.List(r.Context(), principal(r.Context()).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

// getSkill returns one skill: GET /v1/skills/{id} ("builtin:<name>" or a UUID) → {skill}.
func (a *api) getSkill(w http.ResponseWriter, r *http.Request) {
	sk, err := a.d.Skills.Get(r.Context(), principal(r.Context()).OwnerID, chi.URLParam(r, "id"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"skill": sk})
}

// addSkillRequest is POST /v1/skills as JSON.
type addSkillRequest struct {
	URL        string `json:"url"`
	DocumentID string `json:"document_id"`
	// Own says the owner wrote it: its playbook is then instructions, not data (§3).
	Own bool `json:"own"`
}

// addSkill installs a skill on the owner's own request: POST /v1/skills with a
// multipart/form-data body (field "file": a zip, tar.gz or SKILL.md; field "own": "true")
// or JSON {url | document_id, own} → 201 {skill}. The skill is read, checked and scanned
// first; a finding at or above high installs it blocked (POST /v1/skills/{id}/override lets
// it run). A refused archive is 422 with a reason per file.
func (a *api) addSkill(w http.ResponseWriter, r *http.Request) {
	owner := principal(r.Context()).OwnerID
	var src skills.Source
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		var err error
		if src, err = skillFromMultipart(r); err != nil {
			fail(w, r, uploadError(err))
			return
		}
	} else {
		var req addSkillRequest
		if err := decode(r, &req); err != nil {
			fail(w, r, err)
			return
		}
		src = skills.Source{URL: strings.TrimSpace(req.URL), Own: req.Own}
		if id := strings.TrimSpace(req.DocumentID); id != "" {
			docID, err := uuid.Parse(id)
			if err != nil {
				fail(w, r, steward.Errorf(steward.CodeInvalid, "document_id %q is not a UUID", id))
				return
			}
			src.DocumentID = docID
		}
	}
	staged, err := a.d.Skills.Stage(r.Context(), owner, src, nil, "")
	if err != nil {
		fail(w, r, err)
		return
	}
	sk, err := a.d.Skills.Install(r.Context(), owner, uuid.MustParse(staged.ID))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"skill": sk})
}

// skillFromMultipart reads the "file" and "own" fields of a multipart skill upload.
func skillFromMultipart(r *http.Request) (skills.Source, error) {
	var src skills.Source
	mr, err := r.MultipartReader()
	if err != nil {
		return src, errorf(http.StatusBadRequest, steward.CodeInvalid, "the multipart body is malformed: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return src, err
		}
		switch part.FormName() {
		case "file":
			src.FileName = part.FileName()
			if src.Archive, err = io.ReadAll(part); err != nil {
				return src, err
			}
		case "own":
			b, err := io.ReadAll(io.LimitReader(part, 16))
			if err != nil {
				return src, err
			}
			src.Own = strings.TrimSpace(string(b)) == "true"
		}
	}
	if len(src.Archive) == 0 {
		return src, errorf(http.StatusBadRequest, steward.CodeInvalid, `the multipart body has no "file" field`)
	}
	return src, nil
}

// deleteSkill removes one of the owner's skills: DELETE /v1/skills/{id} → 204.
func (a *api) deleteSkill(w http.ResponseWriter, r *http.Request) {
	if err := a.d.Skills.Delete(r.Context(), principal(r.Context()).OwnerID, chi.URLParam(r, "id")); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// setSkill turns a skill on or off (a built-in too): POST /v1/skills/{id}/enable and
// /disable → {skill}. A blocked skill is 409 until it is overridden.
func (a *api) setSkill(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sk, err := a.d.Skills.SetEnabled(r.Context(), principal(r.Context()).OwnerID, chi.URLParam(r, "id"), on)
		if err != nil {
			fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"skill": sk})
	}
}

// overrideSkill lets a blocked skill run despite its findings, recorded in the audit log:
// POST /v1/skills/{id}/override → {skill}. Whatever its playbook says, writes still wait for
// the owner.
func (a *api) overrideSkill(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "skill")
	if !ok {
		return
	}
	sk, err := a.d.Skills.Override(r.Context(), principal(r.Context()).OwnerID, id, "api")
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"skill": sk})
}
