// Package web reaches the world for the agent's web tools: Fetcher reads a page for web_fetch
// and SearXNG answers web_search (the other answer, Gemini grounded in Google Search, is
// internal/llm/gemini's Searcher: the Gemini SDK stays in its adapter, docs/ARCHITECTURE.md
// §11). Every request to a URL a model chose goes through the egress package's guarded client
// (docs/ARCHITECTURE.md §6).
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

	"golang.org/x/net/html/charset"

	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/steward"
)

// DefaultMaxBytes is the download cap of a fetch when Fetcher.MaxBytes is zero.
const DefaultMaxBytes = 5 << 20

// Fetcher reads pages over http and https through an egress client; it implements
// webtools.Fetcher and doctools.Fetcher.
type Fetcher struct {
	// Client is an egress client (egress.NewClient with AllowHTTP); nothing else may be used.
	Client *http.Client
	// MaxBytes caps a download; a larger body is refused. Zero means DefaultMaxBytes.
	MaxBytes int64
}

// Fetch GETs rawURL and returns its text: HTML as its readable main content (go-readability,
// links kept as "text (URL)"), JSON and text as they are. Other types, error statuses and
// bodies over the cap are errors whose message says why.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (steward.WebPage, error) {
	limit := f.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	body, declared, finalURL, err := f.download(ctx, rawURL, limit)
	if err != nil {
		return steward.WebPage{}, err
	}
	if declared == "" {
		declared = http.DetectContentType(body)
	}
	mt, params, err := mime.ParseMediaType(declared)
	if err != nil {
		return steward.WebPage{}, fmt.Errorf("the server sent an unreadable content type %q", declared)
	}
	page := steward.WebPage{URL: finalURL, ContentType: mt}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || mt == "application/pdf":
		// HTML and PDF go through the document reader: its caps, and its sandbox.
		ex, err := doctext.Extract(ctx, doctext.Source{ContentType: declared, URL: page.URL, Data: body})
		if err != nil {
			what := "page"
			if mt == "application/pdf" {
				what = "PDF"
			}
			return steward.WebPage{}, fmt.Errorf("the %s could not be read: %w", what, err)
		}
		page.Title, page.Text = ex.Title, ex.Text()
	case mt == "application/json" || strings.HasSuffix(mt, "+json") || strings.HasPrefix(mt, "text/"):
		page.Text, err = decodeText(body, params["charset"])
		if err != nil {
			return steward.WebPage{}, err
		}
	default:
		return steward.WebPage{}, fmt.Errorf("content type %s is not supported: web_fetch reads HTML, JSON, text and PDF", mt)
	}
	return page, nil
}

// download gets rawURL within limit bytes: the body, its declared content type and the URL
// it came from after redirects.
func (f *Fetcher) download(ctx context.Context, rawURL string, limit int64) (body []byte, contentType, finalURL string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, "", "", fmt.Errorf("not a valid URL: %q", rawURL)
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
			return nil, "", "", fmt.Errorf("the URL is refused: %w", err)
		}
		return nil, "", "", fmt.Errorf("the fetch failed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, "", "", fmt.Errorf("the server answered %s", resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, "", "", fmt.Errorf("the document is %d bytes, over the download cap of %d bytes", resp.ContentLength, limit)
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, "", "", fmt.Errorf("the download failed: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, "", "", fmt.Errorf("the document is over the download cap of %d bytes", limit)
	}
	return body, resp.Header.Get("Content-Type"), resp.Request.URL.String(), nil
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
