package audio

import (
	"encoding/binary"
	"math"
	"strings"
	"time"
)

// EBML element IDs readWebM knows (Matroska, RFC 9559). Masters are read into, not skipped.
const (
	ebmlHeader    = 0x1A45DFA3
	ebmlDocType   = 0x4282
	mkvSegment    = 0x18538067
	mkvInfo       = 0x1549A966
	mkvScale      = 0x2AD7B1
	mkvDuration   = 0x4489
	mkvTracks     = 0x1654AE6B
	mkvTrackEntry = 0xAE
	mkvCodecID    = 0x86
	mkvCluster    = 0x1F43B675
	mkvTimecode   = 0xE7
	mkvBlockGroup = 0xA0
	mkvBlock      = 0xA1
	mkvSimple     = 0xA3
)

// readWebM scans a WebM file's elements in order — descending into the few masters that hold
// what it needs rather than keeping a tree, so a master of unknown size (what MediaRecorder
// writes while it records) costs nothing — and reads the doc type, the codec, the stated
// duration, and the time of the last block, which is the length when no duration is stated
// (MediaRecorder states none).
func readWebM(b []byte) (Info, error) {
	w := webmReader{info: Info{Type: WebM}, scale: 1_000_000}
	for p := 0; p < len(b); {
		id, n := vint(b[p:], true)
		if n == 0 {
			return w.info, broken(WebM, "an element's id is malformed")
		}
		size, m := vint(b[p+n:], false)
		if m == 0 {
			return w.info, broken(WebM, "an element's size is malformed")
		}
		p += n + m
		unknown := size == 1<<(7*m)-1
		switch id {
		case ebmlHeader, mkvSegment, mkvInfo, mkvTracks, mkvTrackEntry, mkvCluster, mkvBlockGroup:
			continue // a master: its children follow
		}
		if unknown {
			return w.info, broken(WebM, "an element has no size")
		}
		if size > uint64(len(b)-p) {
			w.info.Duration = w.length()
			return w.info, broken(WebM, "an element runs past the end")
		}
		if err := w.element(id, b[p:p+int(size)]); err != nil {
			return w.info, err
		}
		p += int(size)
	}
	if w.docType != "webm" && w.docType != "matroska" {
		return w.info, invalid("the file starts like WebM but is not WebM")
	}
	if w.info.Codec != "opus" && w.info.Codec != "vorbis" {
		return w.info, invalid("the WebM recording holds neither Opus nor Vorbis sound")
	}
	w.info.Duration = w.length()
	return w.info, nil
}

// webmReader is what readWebM has read so far.
type webmReader struct {
	info     Info
	scale    uint64 // ns per timecode unit
	stated   float64
	cluster  uint64
	lastTick uint64
	docType  string
}

// length is the recording's length from what was read.
func (w *webmReader) length() time.Duration {
	return webmLength(w.stated, w.scale, w.cluster+w.lastTick)
}

// element reads the value v of one element that is not a master.
func (w *webmReader) element(id uint64, v []byte) error {
	switch id {
	case ebmlDocType:
		w.docType = string(v)
	case mkvScale:
		if s := uintOf(v); s > 0 && s <= 1e9 {
			w.scale = s
		}
	case mkvDuration:
		switch len(v) {
		case 4:
			w.stated = float64(math.Float32frombits(binary.BigEndian.Uint32(v)))
		case 8:
			w.stated = math.Float64frombits(binary.BigEndian.Uint64(v))
		}
	case mkvCodecID:
		c := string(v)
		if strings.HasPrefix(c, "V_") {
			return invalid("the WebM file holds video; send a recording of sound only")
		}
		if w.info.Codec == "" {
			w.info.Codec = strings.ToLower(strings.TrimPrefix(c, "A_"))
		}
	case mkvTimecode:
		w.cluster = uintOf(v)
	case mkvSimple, mkvBlock:
		if _, k := vint(v, false); k > 0 && len(v) >= k+2 {
			if rel := int16(binary.BigEndian.Uint16(v[k:])); rel > 0 {
				w.lastTick = max(w.lastTick, uint64(rel))
			}
		}
	}
	return nil
}

// webmLength is the stated duration when there is one (in timecode units), else the time of
// the last block seen.
func webmLength(stated float64, scale, ticks uint64) time.Duration {
	if stated > 0 && !math.IsInf(stated, 0) {
		ns := stated * float64(scale)
		if ns > float64(maxDuration) {
			return maxDuration
		}
		return time.Duration(ns)
	}
	if scale != 0 && ticks > uint64(maxDuration)/scale {
		return maxDuration
	}
	return time.Duration(ticks * scale)
}

// vint reads an EBML variable-length integer: an ID keeps its length marker, a size does not.
// n is 0 when it is malformed or cut short.
func vint(b []byte, keepMarker bool) (v uint64, n int) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0
	}
	n = 1
	for mask := byte(0x80); b[0]&mask == 0; mask >>= 1 {
		n++
	}
	if n > 8 || len(b) < n || keepMarker && n > 4 {
		return 0, 0
	}
	v = uint64(b[0])
	if !keepMarker {
		v &= uint64(0xFF >> n)
	}
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n
}

// uintOf reads a big-endian unsigned integer of up to 8 bytes (longer: the last 8).
func uintOf(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}
