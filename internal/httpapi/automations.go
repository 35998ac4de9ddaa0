package httpapi

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/steward"
)

// automationRoutes adds /v1/reminders, /v1/automations and /v1/timezone (docs/API.md,
// docs/AUTOMATIONS.md); nil Automations answers 404 there.
func (a *api) automationRoutes(r chi.Router) {
	on := configured(a.d.Automations != nil, "reminders and automations are")
	r.With(on).Get("/timezone", a.timezone)
	r.With(on, requireJSON).Put("/timezone", a.setTimezone)
	r.With(on).Get("/reminders", a.reminders)
	r.With(on, requireJSON).Post("/reminders", a.addReminder)
	r.With(on).Delete("/reminders/{id}", a.cancelReminder)
	r.With(on).Get("/automations", a.automations)
	r.With(on, requireJSON).Post("/automations", a.addAutomation)
	r.With(on).Get("/automations/{id}", a.automation)
	r.With(on, requireJSON).Patch("/automations/{id}", a.editAutomation)
	r.With(on).Delete("/automations/{id}", a.deleteAutomation)
}

// timezone is the owner's time zone: GET /v1/timezone → {"timezone": "Europe/Berlin"}.
func (a *api) timezone(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	loc, err := a.d.Automations.Zone(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"timezone": loc.String()})
}

// setTimezone sets it: PUT /v1/timezone {"timezone": "Europe/Berlin"} → 200; 422 for a name
// that is not an IANA zone.
func (a *api) setTimezone(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Timezone string `json:"timezone"`
	}
	if err := decode(r, &in); err != nil {
		fail(w, r, err)
		return
	}
	ctx := r.Context()
	tz, err := a.d.Automations.SetZone(ctx, principal(ctx).OwnerID, in.Timezone)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"timezone": tz})
}

// reminders lists the pending reminders (?all=true: the fired and cancelled too):
// GET /v1/reminders → {"reminders": [...]}.
func (a *api) reminders(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	all := false
	if s := r.URL.Query().Get("all"); s != "" {
		var err error
		if all, err = strconv.ParseBool(s); err != nil {
			fail(w, r, errorf(http.StatusBadRequest, steward.CodeInvalid, "all must be true or false"))
			return
		}
	}
	list, err := a.d.Automations.ListReminders(ctx, principal(ctx).OwnerID, all)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reminders": list})
}

// addReminder sets one: POST /v1/reminders {"text","at"} → 201 with the reminder and "when",
// its time in the owner's zone and UTC; 422 for an unreadable or past time, or the limit.
func (a *api) addReminder(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Text string `json:"text"`
		At   string `json:"at"`
	}
	if err := decode(r, &in); err != nil {
		fail(w, r, err)
		return
	}
	ctx := r.Context()
	v, err := a.d.Automations.CreateReminder(ctx, principal(ctx).OwnerID, in.Text, in.At, nil)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// cancelReminder cancels a pending reminder: DELETE /v1/reminders/{id} → 200 with it; 409
// when it fired or was cancelled already.
func (a *api) cancelReminder(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "reminder")
	if !ok {
		return
	}
	ctx := r.Context()
	v, err := a.d.Automations.CancelReminder(ctx, principal(ctx).OwnerID, id)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// automations lists them with their next three runs and last run: GET /v1/automations.
func (a *api) automations(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	list, err := a.d.Automations.ListAutomations(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	if list == nil {
		list = []automation.View{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"automations": list})
}

// addAutomation creates one: POST /v1/automations {"instruction", "schedule"} (or
// "mail_from"/"mail_subject") → 201; 422 for a schedule it cannot read, too frequent, or the
// limit.
func (a *api) addAutomation(w http.ResponseWriter, r *http.Request) {
	var in automation.Input
	if err := decode(r, &in); err != nil {
		fail(w, r, err)
		return
	}
	ctx := r.Context()
	v, err := a.d.Automations.CreateAutomation(ctx, principal(ctx).OwnerID, in)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// automation is one: GET /v1/automations/{id}.
func (a *api) automation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "automation")
	if !ok {
		return
	}
	ctx := r.Context()
	v, err := a.d.Automations.GetAutomation(ctx, principal(ctx).OwnerID, id)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// editAutomation changes one: PATCH /v1/automations/{id} {"instruction"?, "schedule"?,
// "status"?: "paused" | "active"}.
func (a *api) editAutomation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "automation")
	if !ok {
		return
	}
	var in struct {
		automation.Input
		Status string `json:"status"`
	}
	if err := decode(r, &in); err != nil {
		fail(w, r, err)
		return
	}
	ctx := r.Context()
	owner := principal(ctx).OwnerID
	var v automation.View
	var err error
	if in.Instruction != "" || in.Schedule != "" {
		if v, err = a.d.Automations.Edit(ctx, owner, id, in.Input); err != nil {
			fail(w, r, err)
			return
		}
	}
	switch in.Status {
	case "":
		if in.Instruction == "" && in.Schedule == "" {
			fail(w, r, steward.Errorf(steward.CodeInvalid, "give instruction, schedule or status"))
			return
		}
	case "paused":
		v, err = a.d.Automations.Pause(ctx, owner, id)
	case "active":
		v, err = a.d.Automations.Resume(ctx, owner, id)
	default:
		err = steward.Errorf(steward.CodeInvalid, "status is paused or active, not %q", in.Status)
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// deleteAutomation deletes one: DELETE /v1/automations/{id} → 204.
func (a *api) deleteAutomation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "automation")
	if !ok {
		return
	}
	ctx := r.Context()
	if err := a.d.Automations.Delete(ctx, principal(ctx).OwnerID, id); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
