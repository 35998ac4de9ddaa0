package audio_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/audio"
	"github.com/stewardhq/steward/internal/audio/audiotest"
	"github.com/stewardhq/steward/internal/steward"
)

// TestInspectRealRecordings reads real speech (espeak-ng) as WAV, and as the Ogg Vorbis and
// MP3 sox makes of it, and finds each one's type and a length within 60 ms of soxi's.
func TestInspectRealRecordings(t *testing.T) {
	wav := audiotest.Speech(t, "Remind me to water the plants tomorrow at nine.")
	for _, c := range []struct{ ext, mime, codec string }{{"wav", audio.WAV, "pcm"}, {"ogg", audio.Ogg, "vorbis"}, {"mp3", audio.MP3, "mp3"}} {
		t.Run(c.ext, func(t *testing.T) {
			path := wav
			if c.ext != "wav" {
				path = audiotest.Convert(t, wav, c.ext)
			}
			data := audiotest.Read(t, path)
			info, err := audio.Inspect(data)
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			_, _, want := audiotest.Soxi(t, data, c.ext)
			if info.Type != c.mime || info.Codec != c.codec {
				t.Errorf("type %s/%s, want %s/%s", info.Type, info.Codec, c.mime, c.codec)
			}
			if got := info.Duration.Seconds(); math.Abs(got-want) > 0.06 || want < 1 {
				t.Errorf("duration %.3fs, soxi says %.3fs", got, want)
			}
		})
	}
}

// TestInspectContainers reads the containers neither espeak-ng nor sox writes here.
func TestInspectContainers(t *testing.T) {
	for name, c := range map[string]struct {
		data        []byte
		mime, codec string
	}{
		"ogg opus": {audiotest.OggOpus(2.5), audio.Ogg, "opus"},
		"webm":     {audiotest.WebM(3.2), audio.WebM, "opus"},
		"m4a":      {audiotest.M4A(4.75), audio.M4A, "mp4a"},
	} {
		info, err := audio.Inspect(c.data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if info.Type != c.mime || info.Codec != c.codec {
			t.Errorf("%s: type %s/%s, want %s/%s", name, info.Type, info.Codec, c.mime, c.codec)
		}
	}
	for name, c := range map[string]struct {
		data []byte
		want time.Duration
	}{"ogg opus": {audiotest.OggOpus(2.5), 2500 * time.Millisecond}, "webm": {audiotest.WebM(3.2), 3200 * time.Millisecond}, "m4a": {audiotest.M4A(4.75), 4750 * time.Millisecond}} {
		if info, _ := audio.Inspect(c.data); info.Duration != c.want {
			t.Errorf("%s: duration %v, want %v", name, info.Duration, c.want)
		}
	}
}

// wavHeader is a WAV header of 16 kHz mono 16-bit PCM whose data chunk claims dataBytes.
func wavHeader(dataBytes uint32) []byte {
	h := audio.WrapPCM(nil, audio.PCMFormat{Rate: 16000, Channels: 1, Bits: 16})
	binary.LittleEndian.PutUint32(h[40:], dataBytes)
	return h
}

// TestInspectHostile answers what is not a whole recording with a CodeInvalid error in
// words, and reports a header's long claim so the caller can refuse it as too long.
func TestInspectHostile(t *testing.T) {
	speech := audiotest.Read(t, audiotest.Speech(t, "Hello there."))
	mp3 := audiotest.Read(t, audiotest.Convert(t, audiotest.Speech(t, "Hello there."), "mp3"))
	tenHours := uint32(10 * 3600 * 32000)
	for name, c := range map[string]struct {
		data []byte
		say  string
	}{
		"empty":              {nil, "empty"},
		"text":               {[]byte("hello, I am not audio at all"), "not a recording"},
		"png":                {[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "not a recording"},
		"wav cut short":      {speech[:len(speech)/2], "cut short"},
		"wav header only":    {speech[:30], "cut short"},
		"wav no sound":       {wavHeader(0), "no sound"},
		"ten-hour claim":     {append(wavHeader(tenHours), make([]byte, 1024)...), "claims"},
		"ogg cut short":      {audiotest.OggOpus(2)[:70], "cut short"},
		"ogg not audio":      {append([]byte("OggS"), make([]byte, 40)...), "neither Opus nor Vorbis"},
		"webm video":         {bytes.Replace(audiotest.WebM(1), []byte("A_OPUS"), []byte("V_VP80"), 1), "video"},
		"webm cut short":     {audiotest.WebM(1)[:60], "cut short"},
		"m4a cut short":      {audiotest.M4A(1)[:50], "cut short"},
		"mp3 cut short":      {mp3[:len(mp3)-100], "cut short"},
		"mp3 two sync bytes": {[]byte{0xFF, 0xFB, 0x90, 0x00, 'x', 'y'}, ""},
	} {
		info, err := audio.Inspect(c.data)
		if err == nil {
			t.Errorf("%s: read as %+v, want an error", name, info)
			continue
		}
		if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), c.say) {
			t.Errorf("%s: %v, want a CodeInvalid error saying %q", name, err, c.say)
		}
	}
	info, _ := audio.Inspect(append(wavHeader(tenHours), make([]byte, 1024)...))
	if info.Duration != 10*time.Hour {
		t.Errorf("the ten-hour claim reads as %v, want 10h (for the caller's limit)", info.Duration)
	}
}

// TestWrapPCM wraps a second of 24 kHz PCM (a speech model's answer) in a WAV header that
// sox reads as 24,000 Hz mono, one second long.
func TestWrapPCM(t *testing.T) {
	pcm := make([]byte, 48000+1) // a second at 16 bits, and half a sample too many
	for i := 0; i+1 < len(pcm); i += 2 {
		binary.LittleEndian.PutUint16(pcm[i:], uint16(int16(8000*math.Sin(float64(i)/20))))
	}
	wav := audio.WrapPCM(pcm, audio.PCMFormat{Rate: 24000, Channels: 1, Bits: 16})
	rate, channels, seconds := audiotest.Soxi(t, wav, "wav")
	if rate != 24000 || channels != 1 || seconds != 1 {
		t.Errorf("soxi: %d Hz, %d channels, %vs; want 24000 Hz mono, 1s", rate, channels, seconds)
	}
	if info, err := audio.Inspect(wav); err != nil || info.Duration != time.Second {
		t.Errorf("Inspect: %+v, %v", info, err)
	}
}

// FuzzInspect: whatever the bytes, Inspect returns without panicking, and a recording it
// accepts has a known type and a length within a year.
func FuzzInspect(f *testing.F) {
	f.Add(audio.WrapPCM(make([]byte, 3200), audio.PCMFormat{Rate: 16000, Channels: 1, Bits: 16}))
	f.Add(audiotest.OggOpus(1))
	f.Add(audiotest.WebM(1))
	f.Add(audiotest.M4A(1))
	f.Add(append([]byte("ID3\x03\x00\x00\x00\x00\x00\x00"), 0xFF, 0xFB, 0x90, 0x00))
	f.Add(wavHeader(0xFFFFFFFF))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := audio.Inspect(data)
		if err != nil {
			if steward.ErrorCode(err) != steward.CodeInvalid {
				t.Fatalf("error %v is not CodeInvalid", err)
			}
			return
		}
		switch info.Type {
		case audio.WAV, audio.Ogg, audio.WebM, audio.MP3, audio.M4A:
		default:
			t.Fatalf("accepted as %q", info.Type)
		}
		if info.Duration <= 0 || info.Duration > 365*24*time.Hour {
			t.Fatalf("duration %v", info.Duration)
		}
	})
}
