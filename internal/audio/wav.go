package audio

import "encoding/binary"

// readWAV reads a RIFF/WAVE file's fmt and data chunks. The data chunk's stated size is the
// length: one that claims more bytes than the file holds is a cut-short recording, whatever
// its duration (the limits of internal/voice refuse a long claim first).
func readWAV(b []byte) (Info, error) {
	var (
		haveFmt                      bool
		format, channels, blockAlign uint16
		rate, byteRate               uint32
	)
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), uint64(binary.LittleEndian.Uint32(b[p+4:p+8]))
		p += 8
		switch id {
		case "fmt ":
			if size < 16 || uint64(len(b)-p) < size {
				return Info{}, broken(WAV, "its format chunk is too short")
			}
			f := b[p:]
			format, channels = binary.LittleEndian.Uint16(f[0:]), binary.LittleEndian.Uint16(f[2:])
			rate, byteRate = binary.LittleEndian.Uint32(f[4:]), binary.LittleEndian.Uint32(f[8:])
			blockAlign = binary.LittleEndian.Uint16(f[12:])
			haveFmt = true
		case "data":
			if !haveFmt {
				return Info{}, broken(WAV, "its sound comes before its format")
			}
			if channels == 0 || channels > 8 || rate < 1000 || rate > 384000 || byteRate == 0 || blockAlign == 0 ||
				byteRate != rate*uint32(blockAlign) {
				return Info{}, broken(WAV, "its format (%d channels at %d Hz, %d bytes a second) is not one a recording has", channels, rate, byteRate)
			}
			info := Info{Type: WAV, Codec: wavCodec(format), Duration: seconds(size, uint64(byteRate))}
			if size > uint64(len(b)-p) {
				// The claim is the duration the limits check first; a claim within them that
				// the file does not hold is a cut-short recording.
				return info, cutShort(WAV, uint64(len(b)-p), size)
			}
			return info, nil
		}
		if size > uint64(len(b)-p) {
			return Info{}, broken(WAV, "a %q chunk runs past the end", id)
		}
		p += int(size + size&1) // chunks are padded to an even length
	}
	return Info{}, broken(WAV, "it has no sound (no data chunk)")
}

func wavCodec(format uint16) string {
	switch format {
	case 1:
		return "pcm"
	case 3:
		return "float"
	case 0xFFFE:
		return "extensible"
	}
	return "wav"
}

// cutShort is the error of a recording of type mime whose header claims claimed bytes of
// sound and that holds only held.
func cutShort(mime string, held, claimed uint64) error {
	return broken(mime, "its header claims %d bytes of sound and it holds %d", claimed, held)
}

// PCMFormat describes raw little-endian signed PCM.
type PCMFormat struct {
	Rate     int // samples per second per channel
	Channels int
	Bits     int // 16 for the s16le speech models return
}

// WrapPCM puts a canonical 44-byte WAV header (PCM, format 1) in front of pcm. A trailing
// partial sample frame is dropped so that the data chunk's size is a whole number of frames.
func WrapPCM(pcm []byte, f PCMFormat) []byte {
	align := f.Channels * f.Bits / 8
	n := len(pcm) - len(pcm)%align
	out := make([]byte, 44+n)
	copy(out, "RIFF")
	binary.LittleEndian.PutUint32(out[4:], uint32(36+n))
	copy(out[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(out[16:], 16)
	binary.LittleEndian.PutUint16(out[20:], 1)
	binary.LittleEndian.PutUint16(out[22:], uint16(f.Channels))
	binary.LittleEndian.PutUint32(out[24:], uint32(f.Rate))
	binary.LittleEndian.PutUint32(out[28:], uint32(f.Rate*align))
	binary.LittleEndian.PutUint16(out[32:], uint16(align))
	binary.LittleEndian.PutUint16(out[34:], uint16(f.Bits))
	copy(out[36:], "data")
	binary.LittleEndian.PutUint32(out[40:], uint32(n))
	copy(out[44:], pcm[:n])
	return out
}
