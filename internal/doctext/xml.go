package doctext

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
)

// Bounds of the XML inside an Office archive (DOCX, XLSX): a part's decompressed bytes,
// how deep its elements nest, and how many elements it has. Word and Excel never come near
// them; a hostile archive (30 million unclosed elements, a million-element part) is refused
// while it streams, before it costs memory.
const (
	MaxPartBytes   = 32 << 20
	MaxXMLDepth    = 256
	MaxXMLElements = 2_000_000
	// MaxXMLAttrs bounds the attributes of one element (a start tag of a million namespace
	// declarations is one element), and MaxXMLTagBytes the bytes of one tag, counted as the
	// part streams, before the decoder builds the tag's attributes: Word's largest start tag
	// (the root's namespaces) is a few KB.
	MaxXMLAttrs    = 1_000
	MaxXMLTagBytes = 64 << 10
)

// errTagTooBig is a tag longer than MaxXMLTagBytes.
var errTagTooBig = errors.New("tag too big")

// tagReader fails with errTagTooBig when a tag (from its < to its >, a quoted attribute value
// included: it may hold a >) runs past MaxXMLTagBytes. Comments, declarations and processing
// instructions (<!…>, <?…>) are not counted.
type tagReader struct {
	r     io.Reader
	state byte // 0 text, '<' a tag's first byte, 't' in a tag, '!' in <!…> or <?…>, else the quote of a value
	n     int
}

func (t *tagReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for _, c := range p[:n] {
		if !t.step(c) {
			return 0, errTagTooBig
		}
	}
	return n, err
}

// step moves past one byte; false when the tag is too long.
func (t *tagReader) step(c byte) bool {
	switch t.state {
	case 0:
		if c == '<' {
			t.state, t.n = '<', 1
		}
		return true
	case '!':
		if c == '>' {
			t.state = 0
		}
		return true
	case '<':
		if c == '!' || c == '?' {
			t.state = '!'
			return true
		}
		t.state = 't'
	}
	t.n++
	switch {
	case t.state == 't' && (c == '"' || c == '\''):
		t.state = c
	case t.state == 't' && c == '>':
		t.state = 0
	case t.state == c: // the value's closing quote
		t.state = 't'
	}
	return t.n <= MaxXMLTagBytes
}

// errPartTooBig is a part that decompresses to more than its limit; counted while reading,
// whatever the archive declares.
var errPartTooBig = errors.New("part too big")

// capReader fails with errPartTooBig past left bytes.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// Another byte would be one too many: look for it.
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			return 0, errPartTooBig
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// archive is an opened Office zip.
type archive struct {
	zr   *zip.Reader
	kind string // "DOCX", "XLSX": for messages
}

// openZip opens an Office archive, refusing an encrypted one and one whose files declare
// more than MaxUnzipped bytes (archive/zip refuses a file that inflates past its declared
// size, and walk counts what it inflates).
func openZip(data []byte, kind string) (*archive, error) {
	if bytes.HasPrefix(data, oleMagic) {
		return nil, refuse(ReasonEncrypted, "the %s is password-protected (encrypted) or in the legacy binary format; save it unprotected as %s", kind, kind)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, refuse(ReasonCorrupt, "the %s is corrupt: it is not a readable zip archive", kind)
	}
	if len(zr.File) > maxZipFiles {
		return nil, refuse(ReasonTooComplex, "the %s has %d files inside; Steward reads at most %d", kind, len(zr.File), maxZipFiles)
	}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > MaxUnzipped {
			return nil, refuse(ReasonBomb, "the %s unpacks to more than %d MB", kind, MaxUnzipped>>20)
		}
	}
	return &archive{zr: zr, kind: kind}, nil
}

// maxZipFiles bounds the entries of an Office archive.
const maxZipFiles = 10_000

// has reports whether the archive holds a part of that name.
func (a *archive) has(name string) bool {
	for _, f := range a.zr.File {
		if f.Name == name {
			return true
		}
	}
	return false
}

// walk streams the XML of the part name, calling fn with each token (start and end
// elements, character data; the decoder's copies are fn's only until it returns). It refuses
// a part that inflates past MaxPartBytes, nests deeper than MaxXMLDepth or has more than
// MaxXMLElements elements, and stops when ctx ends.
func (a *archive) walk(ctx context.Context, name string, fn func(xml.Token) error) error {
	f, err := a.zr.Open(name)
	if err != nil {
		return refuse(ReasonCorrupt, "the %s is corrupt: its %s cannot be opened", a.kind, name)
	}
	defer f.Close()
	dec := xml.NewDecoder(&tagReader{r: &capReader{r: f, left: MaxPartBytes}})
	depth, elements := 0, 0
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return a.tokenError(name, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			elements++
			if len(t.Attr) > MaxXMLAttrs {
				return refuse(ReasonTooComplex, "the %s's %s has an element with more than %d attributes", a.kind, name, MaxXMLAttrs)
			}
			if depth > MaxXMLDepth {
				return refuse(ReasonTooComplex, "the %s's %s nests elements more than %d deep", a.kind, name, MaxXMLDepth)
			}
			if elements > MaxXMLElements {
				return refuse(ReasonTooComplex, "the %s's %s has more than %d elements", a.kind, name, MaxXMLElements)
			}
		case xml.EndElement:
			depth--
		}
		if err := fn(tok); err != nil {
			return err
		}
	}
}

// tokenError is the refusal of a part whose next token could not be read.
func (a *archive) tokenError(name string, err error) error {
	switch {
	case errors.Is(err, errTagTooBig):
		return refuse(ReasonTooComplex, "the %s's %s has a tag longer than %d KB", a.kind, name, MaxXMLTagBytes>>10)
	case errors.Is(err, errPartTooBig):
		return refuse(ReasonBomb, "the %s's %s unpacks to more than %d MB", a.kind, name, MaxPartBytes>>20)
	case errors.Is(err, zip.ErrFormat):
		// archive/zip stops a file that inflates past the size its headers declare.
		return refuse(ReasonBomb, "the %s's %s unpacks to more than its archive declares", a.kind, name)
	}
	return refuse(ReasonCorrupt, "the %s is corrupt: its %s does not parse", a.kind, name)
}

// attr is the value of the attribute local name of a start element ("" when absent).
func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
