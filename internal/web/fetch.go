// Package web reaches the world for the agent's web tools: Fetcher reads a page for web_fetch
// and Gemini and SearXNG answer web_search. Every request to a URL a model chose goes through
// the egress package's guarded client (docs/ARCHITECTURE.md §6).
package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/tools"
)

// DefaultMaxBytes is the download cap of a fetch when Fetcher.MaxBytes is zero.
const DefaultMaxBytes = 5 << 20

// Fetcher reads pages over http and https through an egress client; it implements
// tools.Fetcher.
type Fetcher struct {
	// Client is an egress client (egress.NewClient with AllowHTTP); nothing else may be used.
	Client *http.Client
	// MaxBytes caps a download; a larger body is refused. Zero means DefaultMaxBytes.
	MaxBytes int64
}

// Fetch GETs rawURL and returns its text: HTML as its readable main content (go-readability,
// links kept as "text (URL)"), JSON and text as they are. Other types, error statuses and
// bodies over the cap are errors whose message says why.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (tools.Page, error) {
	limit := f.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return tools.Page{}, fmt.Errorf("not a valid URL: %q", rawURL)
	}
	req.Header.Set("User-Agent", "Steward/1 (web_fetch)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.5")
	resp, err := f.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is the model's own; say only what went wrong
		}
		if errors.Is(err, egress.ErrBlocked) {
			return tools.Page{}, fmt.Errorf("the URL is refused: %w", err)
		}
		return tools.Page{}, fmt.Errorf("the fetch failed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return tools.Page{}, fmt.Errorf("the server answered %s", resp.Status)
	}
	if resp.ContentLength > limit {
		return tools.Page{}, fmt.Errorf("the document is %d bytes, over the download cap of %d bytes", resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return tools.Page{}, fmt.Errorf("the download failed: %w", err)
	}
	if int64(len(body)) > limit {
		return tools.Page{}, fmt.Errorf("the document is over the download cap of %d bytes", limit)
	}
	declared := resp.Header.Get("Content-Type")
	if declared == "" {
		declared = http.DetectContentType(body)
	}
	mt, params, err := mime.ParseMediaType(declared)
	if err != nil {
		return tools.Page{}, fmt.Errorf("the server sent an unreadable content type %q", declared)
	}
	page := tools.Page{URL: resp.Request.URL.String(), ContentType: mt}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		page.Title, page.Text, err = readable(body, declared, resp.Request.URL)
		if err != nil {
			return tools.Page{}, err
		}
	case mt == "application/json" || strings.HasSuffix(mt, "+json") || strings.HasPrefix(mt, "text/"):
		page.Text, err = decodeText(body, params["charset"])
		if err != nil {
			return tools.Page{}, err
		}
	case mt == "application/pdf":
		ex, err := document.ExtractPDF(body)
		if err != nil {
			return tools.Page{}, fmt.Errorf("the PDF could not be read: %w", err)
		}
		page.Text = ex.Text()
	default:
		return tools.Page{}, fmt.Errorf("content type %s is not supported: web_fetch reads HTML, JSON, text and PDF", mt)
	}
	return page, nil
}

// decodeText returns a text body as UTF-8, converting from its declared charset.
func decodeText(body []byte, cs string) (string, error) {
	if cs == "" || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "us-ascii") {
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	r, err := charset.NewReaderLabel(cs, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("the text is in an unknown charset %q", cs)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("the text could not be decoded from %s", cs)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// readable extracts the main content of an HTML page as text, with each link's absolute URL
// after its text.
func readable(body []byte, contentType string, pageURL *url.URL) (title, text string, err error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return "", "", fmt.Errorf("the page's charset is not readable: %w", err)
	}
	article, err := readability.FromReader(r, pageURL)
	if err != nil {
		return "", "", fmt.Errorf("the page could not be read: %w", err)
	}
	if article.Node == nil {
		return article.Title(), "", nil
	}
	keepLinks(article.Node)
	text = strings.TrimSpace(render.InnerText(article.Node))
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	return article.Title(), text, nil
}

// keepLinks appends " (URL)" after the text of every link to an http(s) address other than
// its own text, so the model can follow it.
func keepLinks(n *html.Node) {
	if n.Type == html.ElementNode && n.Data == "a" {
		for _, a := range n.Attr {
			if a.Key != "href" || !(strings.HasPrefix(a.Val, "http://") || strings.HasPrefix(a.Val, "https://")) {
				continue
			}
			if strings.TrimSpace(render.InnerText(n)) != a.Val {
				n.AppendChild(&html.Node{Type: html.TextNode, Data: " (" + a.Val + ")"})
			}
		}
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		keepLinks(c)
	}
}
