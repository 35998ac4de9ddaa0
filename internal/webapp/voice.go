package webapp

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/voice"
)

// Voice in the web app (docs/ARCHITECTURE.md §18): the composer's microphone records with
// MediaRecorder and posts the recording to POST /voice/transcribe, whose transcript app.js
// puts in the box for the owner to edit and send; an answer's Play button posts its text to
// POST /voice/speak and plays the audio. Both take the X-CSRF-Token header and answer errors
// as {"error": words}.

// voiceError answers a voice call's failure in words, as JSON, at the status of the one
// table (steward.HTTPStatusOf), with Retry-After when the error says when to try again.
func voiceError(w http.ResponseWriter, r *http.Request, err error) {
	msg, ok := invalid(err)
	status := steward.HTTPStatusOf(err)
	if !ok {
		zerolog.Ctx(r.Context()).Error().Err(err).Msg("web app: voice")
		status, msg = http.StatusInternalServerError, "Something went wrong with the voice service; try again."
	}
	if s := steward.RetrySeconds(err); s > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
	writeJSON(w, status, map[string]string{"error": msg})
}

// transcribe is POST /voice/transcribe: the body is the recording (its Content-Type the
// browser's, only quoted in errors) → {"text","language","duration_ms"}.
func (a *web) transcribe(w http.ResponseWriter, r *http.Request) {
	if !a.d.Voice.CanTranscribe() {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Voice messages are not set up on this server."})
		return
	}
	release, err := a.d.Uploads.Admit(current(r).OwnerID) // before the body is read (docs/ARCHITECTURE.md §12)
	if err != nil {
		msg, _ := invalid(err)
		w.Header().Set("Retry-After", strconv.Itoa(steward.RetrySeconds(err)))
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": msg})
		return
	}
	defer release()
	r.Body = http.MaxBytesReader(w, r.Body, int64(a.d.Voice.MaxBytes())+1)
	data, err := io.ReadAll(r.Body)
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		err = steward.Errorf(steward.CodeTooLarge, "the recording is too long; keep it under %d MB", a.d.Voice.MaxBytes()>>20)
	} else if err != nil {
		err = steward.Errorf(steward.CodeInvalid, "the recording was cut off on its way; try again")
	}
	if err == nil {
		liftWriteDeadline(w)
		var t any
		if t, err = a.d.Voice.Transcribe(r.Context(), current(r).OwnerID, data, r.Header.Get("Content-Type")); err == nil {
			writeJSON(w, http.StatusOK, t)
			return
		}
	}
	voiceError(w, r, err)
}

// speak is POST /voice/speak {"text"} → the audio (audio/wav).
func (a *web) speak(w http.ResponseWriter, r *http.Request) {
	if !a.d.Voice.CanSpeak() {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Reading answers aloud is not set up on this server."})
		return
	}
	var body struct{ Text string }
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "send {\"text\": …}"})
		return
	}
	liftWriteDeadline(w)
	out, err := a.d.Voice.Speak(r.Context(), current(r).OwnerID, body.Text, "", "")
	if err != nil {
		voiceError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", out.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(out.Data)))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(out.Data)
}

// liftWriteDeadline lifts the server's write deadline (WriteTimeout counts from the request)
// while a voice backend works, up to the voice service's own timeout.
func liftWriteDeadline(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(voice.DefaultTimeout + 30*time.Second))
}
