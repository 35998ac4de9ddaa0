package document

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// ServeFile writes f as a download (GET /v1/documents/{id}/content and the web app's link):
// an attachment under a filename stripped of path separators and quotes, the stored content
// type, nosniff and a sandbox, so a stored HTML file never runs as a page of Steward's origin.
func ServeFile(w http.ResponseWriter, f File) {
	h := w.Header()
	ct := f.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	h.Set("Content-Disposition", Disposition(f.Name))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "private, no-store")
	h.Set("Content-Length", strconv.Itoa(len(f.Data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(f.Data)
}

// Disposition is the Content-Disposition of a download named name: attachment with a
// filename (RFC 2231-encoded when it is not plain ASCII) in which path separators, quotes and
// control characters are replaced by "_".
func Disposition(name string) string {
	safe := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`/\"`, r) {
			return '_'
		}
		return r
	}, name)
	if safe == "" || safe == "." || safe == ".." {
		safe = "document"
	}
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": safe}); v != "" {
		return v
	}
	return "attachment"
}
