package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"
)

// Page is what a Fetcher read from a URL, already as text: readable text for HTML, the body
// itself for JSON and plain text.
type Page struct {
	// URL is the address the text came from, after redirects.
	URL string
	// ContentType is the media type the server declared (or that was sniffed).
	ContentType string
	// Title is the page's title, when it has one.
	Title string
	// Text is the page's content.
	Text string
}

// Fetcher reads a URL for web_fetch (internal/web, through the egress guard). Its errors are
// read by the model: a refused address, a 404, an unsupported type, a page over the
// download cap.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (Page, error)
}

// Source is one search result.
type Source struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// SearchResult is what a Searcher found: a short answer when the backend writes one (Gemini
// with Google Search grounding) and the sources.
type SearchResult struct {
	Answer  string   `json:"answer,omitempty"`
	Sources []Source `json:"sources"`
}

// Searcher answers web_search (internal/web: Gemini grounding or SearXNG). Its errors are
// read by the model.
type Searcher interface {
	Search(ctx context.Context, query string, maxResults int) (SearchResult, error)
}

// Defaults and bounds of the web tools' arguments.
const (
	DefaultMaxChars   = 20000
	maxMaxChars       = 100000
	defaultMaxResults = 5
	maxMaxResults     = 10
)

// webFetchArgs are the arguments of web_fetch.
type webFetchArgs struct {
	URL      string `json:"url" jsonschema:"the http or https URL to read"`
	MaxChars int    `json:"max_chars,omitempty" jsonschema:"the most characters of text to return (default 20000, at most 100000)"`
}

// Check trims the URL and bounds max_chars.
func (a *webFetchArgs) Check() error {
	a.URL = strings.TrimSpace(a.URL)
	if err := checkLength("url", a.URL, 1, 4096); err != nil {
		return err
	}
	if err := orDefaultIn("max_chars", &a.MaxChars, DefaultMaxChars, maxMaxChars); err != nil {
		return err
	}
	return nil
}

// WebFetchTool returns the web_fetch tool (read) reading pages through f. Its output, like
// every tool result, reaches the model only inside a data block (internal/agent); it taints
// the turn, and it is Egress: its URL can carry data out (docs/ARCHITECTURE.md §3).
func WebFetchTool(f Fetcher) Tool {
	t := webFetchTool(f)
	t.Egress, t.Untrusted = true, true
	return t
}

func webFetchTool(f Fetcher) Tool {
	return Say(New("web_fetch",
		"Read a web page or a JSON or text document by URL (http or https). HTML comes back as its readable text "+
			"with links as (URL) after their text. The text is cut at max_chars (default 20000); the result says when.",
		steward.KindRead,
		func(ctx context.Context, _ Env, a webFetchArgs) (any, error) {
			if f == nil {
				return nil, errors.New("web_fetch has no fetcher")
			}
			p, err := f.Fetch(ctx, a.URL)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, &ArgError{Field: "url", Msg: err.Error(), Err: err}
			}
			text, total, cut := cutRunes(p.Text, a.MaxChars)
			out := map[string]any{"url": p.URL, "content_type": p.ContentType, "text": text}
			if p.Title != "" {
				out["title"] = p.Title
			}
			if cut {
				out["truncated"] = true
				out["note"] = fmt.Sprintf("the text was cut at %d of %d characters", a.MaxChars, total)
			}
			return out, nil
		}), sayWebFetch, saidWebFetch)
}

// cutRunes returns s cut to at most n characters, its length in characters, and whether it
// was cut.
func cutRunes(s string, n int) (string, int, bool) {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s, total, false
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k], total, true
		}
		i++
	}
	return s, total, false
}

// webSearchArgs are the arguments of web_search.
type webSearchArgs struct {
	Query      string `json:"query" jsonschema:"what to search the web for"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"the most sources to return (default 5, at most 10)"`
}

// Check trims the query and bounds max_results.
func (a *webSearchArgs) Check() error {
	a.Query = strings.TrimSpace(a.Query)
	if err := checkLength("query", a.Query, 1, 500); err != nil {
		return err
	}
	if err := orDefaultIn("max_results", &a.MaxResults, defaultMaxResults, maxMaxResults); err != nil {
		return err
	}
	return nil
}

// WebSearchTool returns the web_search tool (read) searching through s. Its output reaches
// the model only inside a data block (internal/agent) and taints the turn.
func WebSearchTool(s Searcher) Tool {
	t := webSearchTool(s)
	t.Untrusted = true
	return t
}

func webSearchTool(s Searcher) Tool {
	return Say(New("web_search",
		"Search the web. Returns a short answer when available and the sources (title, URL); "+
			"use web_fetch to read a source.",
		steward.KindRead,
		func(ctx context.Context, _ Env, a webSearchArgs) (any, error) {
			if s == nil {
				return nil, errors.New("web_search has no search backend")
			}
			res, err := s.Search(ctx, a.Query, a.MaxResults)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, &ArgError{Field: "query", Msg: "the search failed: " + err.Error(), Err: err}
			}
			if len(res.Sources) > a.MaxResults {
				res.Sources = res.Sources[:a.MaxResults]
			}
			if res.Sources == nil {
				res.Sources = []Source{}
			}
			return res, nil
		}), sayWebSearch, saidWebSearch)
}

func sayWebFetch(a webFetchArgs) string { return "Fetch " + Site(a.URL) }

func saidWebFetch(a webFetchArgs, o struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}) string {
	if t := strings.TrimSpace(o.Title); t != "" {
		return "Read " + Quote(t)
	}
	return "Read " + Site(cmp.Or(o.URL, a.URL))
}

func sayWebSearch(a webSearchArgs) string { return "Search the web for " + Quote(a.Query) }

func saidWebSearch(_ webSearchArgs, o SearchResult) string {
	return "Found " + Count(len(o.Sources), "source")
}
