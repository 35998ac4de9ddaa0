package audio

import (
	"bytes"
	"encoding/binary"
)

// readOgg walks an Ogg stream's pages (RFC 3533) and reads the codec from the first packet
// (OpusHead, RFC 7845; or a Vorbis identification header) and the length from the granule
// position of the last page of that stream: for Opus 48 kHz samples less the pre-skip, for
// Vorbis samples at the stream's rate.
func readOgg(b []byte) (Info, error) {
	var (
		info    = Info{Type: Ogg}
		serial  uint32
		rate    uint64
		preSkip uint64
		last    int64 = -1
		pages   int
	)
	for p := 0; p < len(b); pages++ {
		if len(b)-p < 27 {
			return info, broken(Ogg, "its last page header is cut short")
		}
		if string(b[p:p+4]) != "OggS" || b[p+4] != 0 {
			return info, broken(Ogg, "page %d does not start where the one before it ends", pages+1)
		}
		granule := int64(binary.LittleEndian.Uint64(b[p+6:]))
		ser := binary.LittleEndian.Uint32(b[p+14:])
		nseg := int(b[p+26])
		if len(b)-p-27 < nseg {
			return info, broken(Ogg, "page %d's segment table is cut short", pages+1)
		}
		body := 0
		for _, s := range b[p+27 : p+27+nseg] {
			body += int(s)
		}
		start := p + 27 + nseg
		if len(b)-start < body {
			return info, broken(Ogg, "page %d's data is cut short", pages+1)
		}
		if pages == 0 {
			serial = ser
			head := b[start : start+body]
			switch {
			case bytes.HasPrefix(head, []byte("OpusHead")) && len(head) >= 19:
				info.Codec, rate, preSkip = "opus", 48000, uint64(binary.LittleEndian.Uint16(head[10:]))
			case bytes.HasPrefix(head, []byte("\x01vorbis")) && len(head) >= 16:
				info.Codec, rate = "vorbis", uint64(binary.LittleEndian.Uint32(head[12:]))
			default:
				return info, invalid("the Ogg recording holds neither Opus nor Vorbis sound")
			}
			if rate == 0 {
				return info, broken(Ogg, "its Vorbis header names no sample rate")
			}
		} else if ser == serial && granule >= 0 {
			last = granule
		}
		p = start + body
	}
	if last >= 0 && uint64(last) > preSkip {
		info.Duration = seconds(uint64(last)-preSkip, rate)
	}
	return info, nil
}
