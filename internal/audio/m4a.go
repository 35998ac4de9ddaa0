package audio

import (
	"encoding/binary"
	"time"
)

// readM4A reads an MPEG-4 file's boxes (ISO/IEC 14496-12): the movie header's timescale and
// duration (mvhd) for the length, and a sound track's handler (hdlr "soun") for the kind.
// It descends only into moov, trak and mdia; every box must end within its parent.
func readM4A(b []byte) (Info, error) {
	info := Info{Type: M4A, Codec: "mp4a"}
	var sound, video, header bool
	var walk func(b []byte, depth int) error
	walk = func(b []byte, depth int) error {
		for p := 0; p < len(b); {
			kind, body, size, err := box(b[p:])
			if err != nil {
				return err
			}
			switch kind {
			case "moov", "trak", "mdia":
				if depth < 4 {
					if err := walk(body, depth+1); err != nil {
						return err
					}
				}
			case "mvhd":
				d, ok := mvhd(body)
				if !ok {
					return broken(M4A, "its movie header is cut short")
				}
				info.Duration, header = d, true
			case "hdlr":
				if len(body) >= 12 {
					sound = sound || string(body[8:12]) == "soun"
					video = video || string(body[8:12]) == "vide"
				}
			}
			p += size
		}
		return nil
	}
	if err := walk(b, 0); err != nil {
		return info, err
	}
	switch {
	case video:
		return info, invalid("the MP4 file holds video; send a recording of sound only")
	case !sound:
		return info, invalid("the MP4 file holds no sound track")
	case !header:
		return info, broken(M4A, "it has no movie header (mvhd) to read its length from")
	}
	return info, nil
}

// box reads the box at the start of b: its kind, its body and its whole size (a 64-bit size
// when the 32-bit one is 1, to the end of b when it is 0).
func box(b []byte) (kind string, body []byte, size int, err error) {
	if len(b) < 8 {
		return "", nil, 0, broken(M4A, "a box header is cut short")
	}
	n, head := uint64(binary.BigEndian.Uint32(b)), 8
	kind = string(b[4:8])
	switch n {
	case 1:
		if len(b) < 16 {
			return "", nil, 0, broken(M4A, "a box header is cut short")
		}
		n, head = binary.BigEndian.Uint64(b[8:]), 16
	case 0:
		n = uint64(len(b)) // to the end
	}
	if n < uint64(head) {
		return "", nil, 0, broken(M4A, "a %q box has an impossible size", kind)
	}
	if n > uint64(len(b)) {
		return "", nil, 0, broken(M4A, "a %q box runs past the end", kind)
	}
	return kind, b[head:n], int(n), nil
}

// mvhd reads a movie header's duration (version 0: 32-bit times, 1: 64-bit).
func mvhd(b []byte) (d time.Duration, ok bool) {
	if len(b) < 4 {
		return 0, false
	}
	switch b[0] {
	case 0:
		if len(b) < 20 {
			return 0, false
		}
		return seconds(uint64(binary.BigEndian.Uint32(b[16:])), uint64(binary.BigEndian.Uint32(b[12:]))), true
	case 1:
		if len(b) < 32 {
			return 0, false
		}
		return seconds(binary.BigEndian.Uint64(b[24:]), uint64(binary.BigEndian.Uint32(b[20:]))), true
	}
	return 0, false
}
