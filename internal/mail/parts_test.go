package mail

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// nestedMessage is a message whose text part is followed by multiparts nested levels deep.
func nestedMessage(levels int) string {
	var b strings.Builder
	b.WriteString("From: Bomb <bomb@example.com>\r\nTo: alice@example.com\r\nSubject: Nested\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=top\r\n\r\n--top\r\nContent-Type: text/plain\r\n\r\nHello at the top.\r\n--top\r\n")
	for i := range levels {
		fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n", i, i)
	}
	b.WriteString("Content-Type: text/plain\r\n\r\ndeepest\r\n")
	for i := levels - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "--b%d--\r\n", i)
	}
	b.WriteString("--top--\r\n")
	return b.String()
}

// BenchmarkParseNested is the cost of reading a message of 12,000 nested multiparts
// (about 830 KB): bounded by MaxDepth, where it was the square of the depth (30 CPU-seconds).
func BenchmarkParseNested(b *testing.B) {
	raw := []byte(nestedMessage(12000))
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		msg, _, err := parse(&imapMessage{folder: "INBOX", uid: 1, body: bytes.NewReader(raw)})
		if err != nil || msg.PartsSkipped == "" {
			b.Fatalf("parse: %+v, %v", msg, err)
		}
	}
}

// FuzzParse: no message makes reading it (read_mail's parse, search_mail's snippet) panic,
// hang or pass its bounds, whatever its nesting (make fuzz).
func FuzzParse(f *testing.F) {
	f.Add([]byte(nestedMessage(40)))
	f.Add([]byte("From: a@example.com\r\nSubject: Hi\r\n\r\nHello\r\n"))
	f.Add([]byte("Content-Type: multipart/alternative; boundary=x\r\n\r\n--x\r\nContent-Type: text/html\r\n\r\n<p>hi</p>\r\n" +
		"--x\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=a.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERg==\r\n--x--\r\n"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=\"\"\r\n\r\n--\r\n\r\n----\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		// A reading that does not return crashes the run, so the fuzzer keeps the input.
		stop := time.AfterFunc(5*time.Second, func() { panic("a message's reading did not return within 5s") })
		defer stop.Stop()
		msg, html, err := parse(&imapMessage{folder: "INBOX", uid: 1, body: bytes.NewReader(raw)})
		if err != nil {
			return
		}
		if len(msg.Attachments) > MaxParts || len(msg.Text) > maxTextPart*3 || len(html) > maxHTMLPart {
			t.Fatalf("past the bounds: %d attachments, %d bytes of text, %d of HTML", len(msg.Attachments), len(msg.Text), len(html))
		}
		snippet, _ := snippetOf(raw)
		if len([]rune(snippet)) > snippetChars {
			t.Fatalf("snippet of %d characters", len([]rune(snippet)))
		}
	})
}
