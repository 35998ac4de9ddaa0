package mail

import (
	"fmt"
	"io"
	"strings"

	gomessage "github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
)

// Bounds on a message's structure (docs/MAIL.md). Each level of nesting reads the bytes
// beneath it through one more multipart reader, so a message nested 12,000 levels deep costs
// the square of its size; at a multipart past MaxDepth the reading stops (skipping its bytes
// would cost each level above it again).
const (
	// MaxDepth is how many multiparts deep a message's parts are read.
	MaxDepth = 32
	// MaxParts is how many parts of a message are read, multiparts included.
	MaxParts = 200
)

// partReader reads a message's parts in order, as go-message's mail.Reader does, within
// MaxDepth and a count of parts; cut says, in words, what was left unread.
type partReader struct {
	Header  mail.Header
	cut     string
	readers []gomessage.MultipartReader
	parts   int
	max     int
}

// newPartReader reads a message's header; an unknown charset or encoding is returned with a
// reader that still reads (as mail.CreateReader does). At most max parts are read.
func newPartReader(r io.Reader, max int) (*partReader, error) {
	e, err := gomessage.Read(r)
	if err != nil && !gomessage.IsUnknownCharset(err) && !gomessage.IsUnknownEncoding(err) {
		return nil, err
	}
	mr := e.MultipartReader()
	if mr == nil { // a single part: made the only part of a multipart, as mail.Reader does
		var h gomessage.Header
		h.Set("Content-Type", "multipart/mixed")
		whole, _ := gomessage.NewMultipart(h, []*gomessage.Entity{e})
		mr = whole.MultipartReader()
	}
	return &partReader{Header: mail.Header{Header: e.Header}, readers: []gomessage.MultipartReader{mr}, max: max}, err
}

// NextPart is the next part that is not a multipart (io.EOF after the last one, or at a
// bound); an unknown charset or encoding comes with the part, as with mail.Reader.
func (r *partReader) NextPart() (*mail.Part, error) {
	for len(r.readers) > 0 {
		p, err := r.readers[len(r.readers)-1].NextPart()
		if err == io.EOF {
			r.readers = r.readers[:len(r.readers)-1]
			continue
		}
		if err != nil && !gomessage.IsUnknownCharset(err) && !gomessage.IsUnknownEncoding(err) {
			return nil, err
		}
		if r.parts++; r.parts > r.max {
			r.note(fmt.Sprintf("the message has more than %d parts; the rest were not read", r.max))
			r.readers = nil
			return nil, io.EOF
		}
		if pmr := p.MultipartReader(); pmr != nil {
			if len(r.readers) >= MaxDepth { // the rest is not read at all: skipping it costs each level above
				r.note(fmt.Sprintf("parts nested deeper than %d levels, and any after them, were not read", MaxDepth))
				r.readers = nil
				return nil, io.EOF
			}
			r.readers = append(r.readers, pmr)
			continue
		}
		return leaf(p), err
	}
	return nil, io.EOF
}

// next is the next part whose charset and encoding are known; false after the last one, at
// a bound, or at a broken tail (what was read is kept).
func (r *partReader) next() (*mail.Part, bool) {
	for {
		p, err := r.NextPart()
		switch {
		case err == nil:
			return p, true
		case gomessage.IsUnknownCharset(err) || gomessage.IsUnknownEncoding(err):
			continue
		}
		return nil, false
	}
}

// note adds what was left unread to cut, once.
func (r *partReader) note(s string) {
	switch {
	case r.cut == "":
		r.cut = s
	case !strings.Contains(r.cut, s):
		r.cut += "; " + s
	}
}

// leaf is a part as mail.Reader words it: inline (text, or said so) or an attachment.
func leaf(p *gomessage.Entity) *mail.Part {
	t, _, _ := p.Header.ContentType()
	disp, _, _ := p.Header.ContentDisposition()
	if disp == "inline" || (disp != "attachment" && strings.HasPrefix(t, "text/")) {
		return &mail.Part{Header: &mail.InlineHeader{Header: p.Header}, Body: p.Body}
	}
	return &mail.Part{Header: &mail.AttachmentHeader{Header: p.Header}, Body: p.Body}
}
