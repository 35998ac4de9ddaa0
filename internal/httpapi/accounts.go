package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/steward"
)

// accountsService returns the accounts service, or answers 404 when none is configured.
func (a *api) accountsService(w http.ResponseWriter, r *http.Request) (*accounts.Service, bool) {
	if a.d.Accounts == nil {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "mail and calendar accounts are not configured on this server"))
		return nil, false
	}
	return a.d.Accounts, true
}

// addMailAccount connects the owner's mail account (docs/MAIL.md): POST /v1/accounts/mail
// {imap_url, smtp_url, username, password, from?} → 201 {account}. It logs in to both servers
// first; a refused login or server is 422 in words and stores nothing.
func (a *api) addMailAccount(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.accountsService(w, r)
	if !ok {
		return
	}
	var body accounts.MailInput
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	v, err := svc.AddMail(r.Context(), principal(r.Context()).OwnerID, body)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// addCalendarAccount connects the owner's calendar: POST /v1/accounts/calendar {caldav_url,
// username, password, timezone?} → 201 {account}.
func (a *api) addCalendarAccount(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.accountsService(w, r)
	if !ok {
		return
	}
	var body accounts.CalendarInput
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	v, err := svc.AddCalendar(r.Context(), principal(r.Context()).OwnerID, body)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// listAccounts lists the owner's accounts (never a password) and sign-ins with providers
// (never a token; connected or not, and why): GET /v1/accounts → {accounts, sign_ins}.
func (a *api) listAccounts(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.accountsService(w, r)
	if !ok {
		return
	}
	list, err := svc.List(r.Context(), principal(r.Context()).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	grants, err := svc.Grants(r.Context(), principal(r.Context()).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"accounts": orEmptySlice(list), "sign_ins": orEmptySlice(grants)})
}

// testAccount logs in to an account's servers again: POST /v1/accounts/{kind}/test →
// {kind, ok, error?}.
func (a *api) testAccount(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.accountsService(w, r)
	if !ok {
		return
	}
	res, err := svc.Test(r.Context(), principal(r.Context()).OwnerID, chi.URLParam(r, "kind"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// removeAccount removes an account: DELETE /v1/accounts/{kind} → 204.
func (a *api) removeAccount(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.accountsService(w, r)
	if !ok {
		return
	}
	if err := svc.Remove(r.Context(), principal(r.Context()).OwnerID, chi.URLParam(r, "kind")); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// disconnectOAuth revokes a provider's grant and removes it with its accounts:
// DELETE /v1/accounts/oauth/{provider} → {revoked, note?}.
func (a *api) disconnectOAuth(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.accountsService(w, r)
	if !ok {
		return
	}
	note, err := svc.DisconnectOAuth(r.Context(), principal(r.Context()).OwnerID, chi.URLParam(r, "provider"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"revoked": note == "", "note": note})
}
