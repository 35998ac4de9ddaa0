// Package audio reads what Steward needs to know about a recording before any model hears it
// — its type, sniffed from the bytes (never the type a sender declared), and its length, read
// from the container — and writes the WAV header around the PCM a speech model returns
// (docs/ARCHITECTURE.md §18). It reads WAV, Ogg (Opus or Vorbis), WebM (Opus or Vorbis), MP3
// and M4A (MPEG-4 audio), only their headers and frame or page boundaries: it decodes no
// sound. Every reader is bounded by the bytes it is handed, allocates nothing in proportion to
// what a header claims, and answers a recording it cannot read with a steward.Error in words
// (CodeInvalid), never a panic; FuzzInspect holds it to that.
//
// It imports only the leaf (internal/steward), so the voice service, the Gemini adapter and
// the fuzz targets share it.
package audio

import (
	"bytes"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// The types Inspect recognises, as MIME types.
const (
	WAV  = "audio/wav"
	Ogg  = "audio/ogg"
	WebM = "audio/webm"
	MP3  = "audio/mpeg"
	M4A  = "audio/mp4"
)

// Accepted names the recordings Steward takes, for messages in words.
const Accepted = "WAV, Ogg (Opus or Vorbis), WebM (Opus), MP3 or M4A"

// Info is what Inspect read from a recording.
type Info struct {
	// Type is the MIME type of the container (WAV, Ogg, WebM, MP3, M4A).
	Type string
	// Codec is what the container says the sound is ("pcm", "opus", "vorbis", "mp3", …),
	// for messages and the trace.
	Codec string
	// Duration is the length the container states or its frames add up to.
	Duration time.Duration
}

// Inspect sniffs data's type from its first bytes and reads its duration. A recording of a
// type it does not know, truncated, malformed, or with no sound at all is a steward.Error of
// CodeInvalid saying so in words. A recording whose header claims more sound than it holds
// returns that claim in Info.Duration with the error, so that a caller checks the claim
// against its limits first: a 10-hour claim is "too long", not merely "cut short".
func Inspect(data []byte) (Info, error) {
	var (
		info Info
		err  error
	)
	switch Kind(data) {
	case WAV:
		info, err = readWAV(data)
	case Ogg:
		info, err = readOgg(data)
	case WebM:
		info, err = readWebM(data)
	case M4A:
		info, err = readM4A(data)
	case MP3:
		info, err = readMP3(data)
	default:
		if len(data) == 0 {
			return Info{}, steward.Errorf(steward.CodeInvalid, "the recording is empty")
		}
		return Info{}, steward.Errorf(steward.CodeInvalid, "this is not a recording Steward reads: send %s", Accepted)
	}
	if err != nil {
		return info, err
	}
	if info.Duration <= 0 {
		return Info{}, steward.Errorf(steward.CodeInvalid, "the %s recording holds no sound", name(info.Type))
	}
	return info, nil
}

// Kind is the type data's first bytes announce (WAV, Ogg, WebM, M4A, MP3), or "" when they
// announce none of them: a sniff that reads nothing further (Inspect reads the rest).
func Kind(data []byte) string {
	switch {
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE":
		return WAV
	case bytes.HasPrefix(data, []byte("OggS")):
		return Ogg
	case bytes.HasPrefix(data, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		return WebM
	case len(data) >= 8 && string(data[4:8]) == "ftyp":
		return M4A
	case bytes.HasPrefix(data, []byte("ID3")) || len(data) >= 2 && data[0] == 0xFF && data[1]&0xE0 == 0xE0:
		return MP3
	}
	return ""
}

// name is a type's name in messages.
func name(mime string) string {
	switch mime {
	case WAV:
		return "WAV"
	case Ogg:
		return "Ogg"
	case WebM:
		return "WebM"
	case MP3:
		return "MP3"
	case M4A:
		return "M4A"
	}
	return mime
}

// Name is a MIME type's name in messages: "WAV", "Ogg", …
func Name(mime string) string { return name(mime) }

// broken is the error of a recording of type mime that cannot be read: why, in words.
func broken(mime, format string, a ...any) error {
	return steward.Errorf(steward.CodeInvalid, "the %s recording is damaged or cut short: %s", name(mime), fmt.Sprintf(format, a...))
}

// maxDuration is the longest length a reader reports: a year, which every limit refuses.
const maxDuration = 365 * 24 * time.Hour

// invalid is a steward.Error of CodeInvalid: a recording the client should not have sent.
func invalid(format string, a ...any) error { return steward.Errorf(steward.CodeInvalid, format, a...) }

// seconds turns a count of units at rate per second into a Duration without overflow: a
// hostile header's count is capped at a year, which every limit refuses.
func seconds(units, rate uint64) time.Duration {
	if rate == 0 {
		return 0
	}
	whole, rest := units/rate, units%rate
	if whole > uint64(maxDuration/time.Second) {
		return maxDuration
	}
	return time.Duration(whole)*time.Second + time.Duration(rest*uint64(time.Second)/rate)
}
