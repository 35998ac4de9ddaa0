package httpapi

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/voice"
)

// voiceLimit caps a body that may carry a recording: the voice service's size limit and room
// for a multipart envelope and its fields, or MaxBodyBytes when that is larger.
func (a *api) voiceLimit() int64 {
	if a.d.Voice == nil {
		return a.d.MaxBodyBytes
	}
	return max(a.d.MaxBodyBytes, int64(a.d.Voice.MaxBytes())+64<<10)
}

// limitChat caps POST /v1/chat's body: a multipart one carries a recording (voiceLimit), any
// other MaxBodyBytes.
func (a *api) limitChat(next http.Handler) http.Handler {
	multipart, other := limitBody(a.voiceLimit())(next), limitBody(a.d.MaxBodyBytes)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
			multipart.ServeHTTP(w, r)
			return
		}
		other.ServeHTTP(w, r)
	})
}

// recording reads the audio of a request: the part "audio" (or "file") of a multipart body,
// with the other fields in form (each at most 4 KB), or the raw body with its Content-Type.
// The declared type is only quoted in errors: the voice service sniffs the bytes.
func recording(r *http.Request) (data []byte, declared string, form map[string]string, err error) {
	form = map[string]string{}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		data, err = io.ReadAll(r.Body)
		return data, r.Header.Get("Content-Type"), form, err
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, "", nil, errorf(http.StatusBadRequest, steward.CodeInvalid, "the multipart body is malformed: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return data, declared, form, nil
		}
		if err != nil {
			return nil, "", nil, err
		}
		switch name := part.FormName(); name {
		case "audio", "file":
			if data != nil {
				return nil, "", nil, errorf(http.StatusBadRequest, steward.CodeInvalid, "send one recording at a time")
			}
			declared = part.Header.Get("Content-Type")
			if data, err = io.ReadAll(part); err != nil {
				return nil, "", nil, err
			}
			if data == nil {
				data = []byte{}
			}
		default:
			v, err := io.ReadAll(io.LimitReader(part, 4<<10+1))
			if err != nil {
				return nil, "", nil, err
			}
			if len(v) > 4<<10 {
				return nil, "", nil, errorf(http.StatusBadRequest, steward.CodeInvalid, "the field %q is longer than 4 KB", name)
			}
			form[name] = string(v)
		}
	}
}

// transcribe: POST /v1/voice/transcribe with a recording (the raw body, or the multipart
// field "audio") → {text, language, duration_ms}. docs/API.md lists the refusals.
func (a *api) transcribe(w http.ResponseWriter, r *http.Request) {
	release, err := a.d.Uploads.Admit(principal(r.Context()).OwnerID) // before the body is read (§12)
	if err != nil {
		fail(w, r, err)
		return
	}
	defer release()
	data, declared, _, err := recording(r)
	if err != nil {
		fail(w, r, recordingError(err))
		return
	}
	if data == nil {
		fail(w, r, errorf(http.StatusBadRequest, steward.CodeInvalid, `the multipart body has no "audio" field`))
		return
	}
	answer := a.longCall(w)
	t, err := a.d.Voice.Transcribe(r.Context(), principal(r.Context()).OwnerID, data, declared)
	answer()
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// speakRequest is the body of POST /v1/voice/speak.
type speakRequest struct {
	Text   string `json:"text"`
	Voice  string `json:"voice"`
	Format string `json:"format"`
}

// speak: POST /v1/voice/speak {text, voice?, format?: "wav"|"ogg"} → the audio itself, its
// Content-Type audio/wav or audio/ogg and X-Steward-Duration-Ms its length. Accept:
// audio/ogg asks for Ogg when format is absent.
func (a *api) speak(w http.ResponseWriter, r *http.Request) {
	var body speakRequest
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	if body.Format == "" && strings.Contains(r.Header.Get("Accept"), "audio/ogg") {
		body.Format = voice.FormatOgg
	}
	answer := a.longCall(w)
	out, err := a.d.Voice.Speak(r.Context(), principal(r.Context()).OwnerID, body.Text, body.Voice, body.Format)
	answer()
	if err != nil {
		fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", out.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(out.Data)))
	w.Header().Set("X-Steward-Duration-Ms", strconv.FormatInt(out.DurationMS, 10))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out.Data)
}

// longCall lifts the server's write deadline (WriteTimeout counts from the request, and a
// backend may take up to the voice service's timeout) while a voice backend works; the
// returned func gives the answer a write deadline of its own, as a turn's has.
func (a *api) longCall(w http.ResponseWriter) func() {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // not supported by every writer (lambdaurl): fine
	return func() { _ = rc.SetWriteDeadline(time.Now().Add(a.d.StreamWriteTimeout)) }
}

// recordingError turns a failure to read a recording's body into its 4xx.
func recordingError(err error) error {
	if tooBig, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return errorf(http.StatusRequestEntityTooLarge, steward.CodeTooLarge, "the recording is larger than %d bytes", tooBig.Limit)
	}
	return uploadError(err)
}

// voiceChat is what POST /v1/chat reads besides a text message: a recording (multipart
// "audio", or audio_document_id, a document holding one) and whether to speak the answer.
type voiceChat struct {
	audio    []byte
	declared string
	// document is a stored document whose bytes are the recording.
	document *uuid.UUID
	speak    bool
	voice    string
	format   string
	// release gives back the upload's place (upload.Gate) once the recording is transcribed.
	release func()
}

// done gives back the recording's place among the uploads in flight, if it holds one.
func (v voiceChat) done() {
	if v.release != nil {
		v.release()
	}
}

// spokenAnswer is the answer read aloud, in POST /v1/chat's response (docs/API.md).
type spokenAnswer struct {
	ContentType string `json:"content_type"`
	DurationMS  int64  `json:"duration_ms"`
	// Data is the audio, base64.
	Data []byte `json:"data"`
}

// voiceView is POST /v1/chat's answer to a voice message or speak: the turn's view, the
// transcript that was the owner's message, and the answer spoken (or why it could not be:
// the turn stands either way).
type voiceView struct {
	steward.View
	Transcript  *voice.Transcript `json:"transcript,omitempty"`
	Speech      *spokenAnswer     `json:"speech,omitempty"`
	SpeechError string            `json:"speech_error,omitempty"`
}

// checkVoice refuses, for a chat request that involves voice, what cannot work
// what cannot work before a turn
// starts: voice not configured, speak with an event stream, a recording with a text message.
func (a *api) checkVoice(r *http.Request, msg string, v voiceChat) error {
	if v.audio == nil && v.document == nil && !v.speak {
		return nil
	}
	switch {
	case a.d.Voice == nil:
		return errorf(http.StatusNotFound, steward.CodeNotFound, "voice is not configured on this server")
	case (v.audio != nil || v.document != nil) && strings.TrimSpace(msg) != "":
		return errorf(http.StatusBadRequest, steward.CodeInvalid, "send a message or a recording, not both")
	case v.audio != nil && v.document != nil:
		return errorf(http.StatusBadRequest, steward.CodeInvalid, "send a recording or audio_document_id, not both")
	case (v.audio != nil || v.document != nil) && !a.d.Voice.CanTranscribe():
		return voice.ErrNoTranscriber
	case v.speak && !a.d.Voice.CanSpeak():
		return voice.ErrNoSpeaker
	case v.speak && wantsStream(r):
		return errorf(http.StatusBadRequest, steward.CodeInvalid, "speak needs a JSON answer: ask without Accept: text/event-stream")
	}
	return nil
}

// heard turns the chat's recording into the owner's message.
func (a *api) heard(ctx context.Context, owner uuid.UUID, v voiceChat) (*voice.Transcript, error) {
	data, declared := v.audio, v.declared
	if v.document != nil {
		if a.d.Documents == nil {
			return nil, errorf(http.StatusNotFound, steward.CodeNotFound, "documents are not configured on this server")
		}
		f, err := a.d.Documents.Content(ctx, owner, *v.document)
		if err != nil {
			if steward.ErrorCode(err) == steward.CodeNotFound {
				return nil, errorf(http.StatusNotFound, steward.CodeNotFound, "no such document")
			}
			return nil, err
		}
		data, declared = f.Data, f.ContentType
	}
	t, err := a.d.Voice.Transcribe(ctx, owner, data, declared)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// spoken reads the turn's answer aloud for the response; a failure is said, not fatal.
func (a *api) spoken(ctx context.Context, owner uuid.UUID, v voiceChat, view steward.View, out *voiceView) {
	if !v.speak {
		return
	}
	if view.Status != steward.StatusCompleted || strings.TrimSpace(view.Answer) == "" {
		out.SpeechError = "there is no answer to speak yet (the turn is " + string(view.Status) + ")"
		return
	}
	s, err := a.d.Voice.Speak(ctx, owner, view.Answer, v.voice, v.format)
	if err != nil {
		_, detail := classify(err)
		out.SpeechError = detail.Message
		return
	}
	out.Speech = &spokenAnswer{ContentType: s.ContentType, DurationMS: s.DurationMS, Data: s.Data}
}

// voiceTurn runs a chat turn that involves voice: the recording transcribed first (its
// transcript is the owner's message), the turn, then the answer spoken.
func (a *api) voiceTurn(w http.ResponseWriter, r *http.Request, in agent.Input, v voiceChat) {
	var heard *voice.Transcript
	if v.audio != nil || v.document != nil {
		t, err := a.heard(r.Context(), in.OwnerID, v)
		v.done()
		if err != nil {
			fail(w, r, err)
			return
		}
		heard, in.Message = t, t.Text
	}
	a.runTurnThen(w, r, func(ctx context.Context, emit agent.Emit) (steward.View, error) {
		return a.d.Runner.Start(ctx, in, emit)
	}, func(ctx context.Context, view steward.View) any {
		out := voiceView{View: view, Transcript: heard}
		a.spoken(ctx, in.OwnerID, v, view, &out)
		return out
	})
}

// chatForm reads a multipart chat request: the recording and the fields message,
// conversation_id, speak ("true"), voice and format. It is an upload (Deps.Uploads): its
// place is taken before the body is read and held until v.done.
func (a *api) chatForm(r *http.Request) (chatRequest, voiceChat, error) {
	release, err := a.d.Uploads.Admit(principal(r.Context()).OwnerID)
	if err != nil {
		return chatRequest{}, voiceChat{}, err
	}
	data, declared, form, err := recording(r)
	if err != nil {
		release()
		return chatRequest{}, voiceChat{}, recordingError(err)
	}
	body := chatRequest{Message: form["message"]}
	if c, ok := form["conversation_id"]; ok {
		body.ConversationID = &c
	}
	v := voiceChat{audio: data, declared: declared, voice: form["voice"], format: form["format"], release: release}
	if s, ok := form["speak"]; ok {
		if v.speak, err = strconv.ParseBool(s); err != nil {
			return body, v, errorf(http.StatusBadRequest, steward.CodeInvalid, "speak must be true or false")
		}
	}
	if d, ok := form["audio_document_id"]; ok {
		id, err := uuid.Parse(d)
		if err != nil {
			return body, v, errorf(http.StatusBadRequest, steward.CodeInvalid, "audio_document_id is not a UUID")
		}
		v.document = &id
	}
	return body, v, nil
}

// voice reads the JSON fields of a chat request that concern voice.
func (b chatRequest) voice() (voiceChat, error) {
	v := voiceChat{speak: b.Speak, voice: b.Voice, format: b.Format}
	if b.AudioDocumentID != "" {
		id, err := uuid.Parse(b.AudioDocumentID)
		if err != nil {
			return v, errorf(http.StatusBadRequest, steward.CodeInvalid, "audio_document_id is not a UUID")
		}
		v.document = &id
	}
	return v, nil
}
