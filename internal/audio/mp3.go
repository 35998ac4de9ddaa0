package audio

// MPEG audio frame tables (ISO/IEC 11172-3, 13818-3): bitrates in kbit/s by version group and
// layer, sample rates by version.
var (
	mp3Bitrates = [2][3][16]int{
		{ // MPEG-1: layer I, II, III
			{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, -1},
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, -1},
			{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, -1},
		},
		{ // MPEG-2 and 2.5
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, -1},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, -1},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, -1},
		},
	}
	mp3Rates = map[byte][3]int{3: {44100, 48000, 32000}, 2: {22050, 24000, 16000}, 0: {11025, 12000, 8000}}
)

// readMP3 skips an ID3v2 tag and adds up the MPEG audio frames that follow, checking each
// frame's header and that it ends within the file; it stops at an ID3v1 tag ("TAG") after the
// last frame. At least two frames are wanted, so that two bytes that happen to look like a
// frame's sync are not taken for MP3.
func readMP3(b []byte) (Info, error) {
	info := Info{Type: MP3, Codec: "mp3"}
	p, err := skipID3(b)
	if err != nil {
		return info, err
	}
	var (
		frames  int
		samples uint64
		rate    int
	)
	for p < len(b) {
		if len(b)-p >= 3 && string(b[p:p+3]) == "TAG" && frames > 0 {
			break
		}
		if len(b)-p < 4 {
			return info, broken(MP3, "its last frame is cut short")
		}
		length, perFrame, sr, ok := mp3Frame(b[p : p+4])
		switch {
		case !ok && frames == 0:
			return info, invalid("this is not a recording Steward reads: send %s", Accepted)
		case !ok:
			return info, broken(MP3, "frame %d is not an MPEG audio frame", frames+1)
		case rate != 0 && sr != rate:
			return info, broken(MP3, "its frames change sample rate")
		}
		rate = sr
		if length > len(b)-p {
			info.Duration = seconds(samples, uint64(rate))
			return info, broken(MP3, "its last frame is cut short")
		}
		p += length
		frames++
		samples += uint64(perFrame)
	}
	if frames < 2 {
		return info, invalid("this is not a recording Steward reads: send %s", Accepted)
	}
	info.Duration = seconds(samples, uint64(rate))
	return info, nil
}

// skipID3 returns where the audio starts: past an ID3v2 tag (and its footer) if there is one.
func skipID3(b []byte) (int, error) {
	if len(b) < 10 || string(b[:3]) != "ID3" {
		return 0, nil
	}
	size := int(b[6]&0x7F)<<21 | int(b[7]&0x7F)<<14 | int(b[8]&0x7F)<<7 | int(b[9]&0x7F)
	p := 10 + size
	if b[5]&0x10 != 0 {
		p += 10 // a footer
	}
	if p > len(b) {
		return 0, broken(MP3, "its ID3 tag runs past the end")
	}
	return p, nil
}

// mp3Frame reads a frame's 4-byte header h: the frame's length in bytes, its samples and its
// sample rate; ok is false when h is not an MPEG audio frame header.
func mp3Frame(h []byte) (length, perFrame, sr int, ok bool) {
	version, layer := h[1]>>3&3, h[1]>>1&3
	rates, okRate := mp3Rates[version]
	bi, ri, pad := int(h[2]>>4), int(h[2]>>2&3), int(h[2]>>1&1)
	if h[0] != 0xFF || h[1]&0xE0 != 0xE0 || !okRate || layer == 0 || ri == 3 || bi == 0 || bi == 15 {
		return 0, 0, 0, false
	}
	group := 0
	if version != 3 {
		group = 1
	}
	li := 3 - int(layer) // layer bits: 3 is layer I, 1 is layer III
	kbps, sr := mp3Bitrates[group][li][bi], rates[ri]
	switch {
	case li == 0:
		length, perFrame = (12*kbps*1000/sr+pad)*4, 384
	case li == 2 && group == 1:
		length, perFrame = 72*kbps*1000/sr+pad, 576
	default:
		length, perFrame = 144*kbps*1000/sr+pad, 1152
	}
	return length, perFrame, sr, true
}
