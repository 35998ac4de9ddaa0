// Package audiotest makes recordings for tests (docs/ARCHITECTURE.md §18): real speech from
// espeak-ng (Debian's espeak-ng package) as WAV, converted by sox (sox, libsox-fmt-all) to Ogg
// Vorbis and MP3, and small hand-built containers for what neither makes (Ogg/Opus, WebM,
// M4A). Everything is written under the test's t.TempDir(); nothing is committed. A test that
// needs a program that is missing fails, saying which package installs it.
package audiotest

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// need fails t when the program is not installed.
func need(t testing.TB, program, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		t.Fatalf("%s is not installed: apt-get install -y %s (the CI's apt line has it)", program, pkg)
	}
	return p
}

// Speech synthesises text with espeak-ng into a WAV file under t.TempDir() and returns its
// path (22,050 Hz mono 16-bit PCM).
func Speech(t testing.TB, text string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "speech.wav")
	cmd := exec.Command(need(t, "espeak-ng", "espeak-ng"), "-v", "en", "-s", "150", "-w", out, text)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, b)
	}
	return out
}

// Convert runs sox in → a file of the extension ext ("ogg": Vorbis, "mp3") and returns its path.
func Convert(t testing.TB, in, ext string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "converted."+ext)
	if b, err := exec.Command(need(t, "sox", "sox libsox-fmt-all"), in, out).CombinedOutput(); err != nil {
		t.Fatalf("sox %s → %s: %v: %s", in, ext, err, b)
	}
	return out
}

// Read is the file's bytes.
func Read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Soxi is what soxi reports of the audio in data: the sample rate, channels and duration in
// seconds.
func Soxi(t testing.TB, data []byte, ext string) (rate, channels int, seconds float64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soxi."+ext)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	soxi := need(t, "soxi", "sox")
	field := func(flag string) string {
		b, err := exec.Command(soxi, flag, path).CombinedOutput()
		if err != nil {
			t.Fatalf("soxi %s: %v: %s", flag, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	rate, _ = strconv.Atoi(field("-r"))
	channels, _ = strconv.Atoi(field("-c"))
	seconds, _ = strconv.ParseFloat(field("-D"), 64)
	return rate, channels, seconds
}

// OggOpus builds an Ogg/Opus stream of the given length: an OpusHead page, an OpusTags page
// and one audio page whose granule position is the length at 48 kHz after a 312-sample
// pre-skip. Its packets are not real Opus: for the container's readers only.
func OggOpus(seconds float64) []byte {
	head := append([]byte("OpusHead"), 1, 1)
	head = binary.LittleEndian.AppendUint16(head, 312)
	head = binary.LittleEndian.AppendUint32(head, 48000)
	head = append(head, 0, 0, 0)
	var b bytes.Buffer
	b.Write(oggPage(0, 2, head))
	b.Write(oggPage(0, 0, append([]byte("OpusTags"), make([]byte, 8)...)))
	b.Write(oggPage(uint64(312+seconds*48000), 4, bytes.Repeat([]byte{0xFC, 0xFF, 0xFE}, 40)))
	return b.Bytes()
}

func oggPage(granule uint64, flags byte, packet []byte) []byte {
	p := append([]byte("OggS"), 0, flags)
	p = binary.LittleEndian.AppendUint64(p, granule)
	p = binary.LittleEndian.AppendUint32(p, 7) // serial
	p = binary.LittleEndian.AppendUint32(p, 0) // sequence
	p = binary.LittleEndian.AppendUint32(p, 0) // checksum (not checked)
	var segs []byte
	n := len(packet)
	for ; n >= 255; n -= 255 {
		segs = append(segs, 255)
	}
	segs = append(segs, byte(n))
	p = append(p, byte(len(segs)))
	p = append(p, segs...)
	return append(p, packet...)
}

// WebM builds a WebM file with one Opus track and a cluster whose last block is at the given
// length, written as MediaRecorder writes it: a Segment and a Cluster of unknown size and no
// stated duration.
func WebM(seconds float64) []byte {
	el := func(id []byte, body []byte) []byte {
		size := uint64(len(body)) | 1<<56 // an 8-byte size
		out := append([]byte{}, id...)
		out = binary.BigEndian.AppendUint64(out, size)
		return append(out, body...)
	}
	unknown := []byte{0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
	header := el([]byte{0x1A, 0x45, 0xDF, 0xA3}, el([]byte{0x42, 0x82}, []byte("webm")))
	info := el([]byte{0x15, 0x49, 0xA9, 0x66}, el([]byte{0x2A, 0xD7, 0xB1}, []byte{0x0F, 0x42, 0x40})) // 1 ms ticks
	tracks := el([]byte{0x16, 0x54, 0xAE, 0x6B}, el([]byte{0xAE}, el([]byte{0x86}, []byte("A_OPUS"))))
	ms := int(seconds * 1000)
	var cluster []byte
	cluster = append(cluster, 0x1F, 0x43, 0xB6, 0x75)
	cluster = append(cluster, unknown...)
	cluster = append(cluster, el([]byte{0xE7}, []byte{0})...) // cluster at 0
	for _, at := range []int{0, ms / 2, ms} {
		block := []byte{0x81} // track 1
		block = binary.BigEndian.AppendUint16(block, uint16(at))
		block = append(block, 0x80, 0xFC, 0xFF, 0xFE)
		cluster = append(cluster, el([]byte{0xA3}, block)...)
	}
	seg := append([]byte{0x18, 0x53, 0x80, 0x67}, unknown...)
	seg = append(seg, info...)
	seg = append(seg, tracks...)
	seg = append(seg, cluster...)
	return append(header, seg...)
}

// M4A builds an MPEG-4 audio file: ftyp, a moov with a movie header of the given length (at
// a 1,000 Hz timescale) and a sound track's handler, and a small mdat.
func M4A(seconds float64) []byte {
	box := func(kind string, body ...[]byte) []byte {
		b := bytes.Join(body, nil)
		out := binary.BigEndian.AppendUint32(nil, uint32(8+len(b)))
		return append(append(out, kind...), b...)
	}
	mvhd := make([]byte, 100)
	binary.BigEndian.PutUint32(mvhd[12:], 1000)
	binary.BigEndian.PutUint32(mvhd[16:], uint32(seconds*1000))
	hdlr := append(make([]byte, 8), "soun"...)
	hdlr = append(hdlr, make([]byte, 13)...)
	return bytes.Join([][]byte{
		box("ftyp", []byte("M4A "), make([]byte, 4), []byte("M4A isom")),
		box("moov", box("mvhd", mvhd), box("trak", box("mdia", box("hdlr", hdlr)))),
		box("mdat", bytes.Repeat([]byte{0x21}, 64)),
	}, nil)
}
