// Package webtools is the web's toolset: web_fetch and web_search, both reads whose output is
// untrusted (docs/ARCHITECTURE.md §3). The fetching and the search backends are
// internal/web's.
package webtools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Fetcher reads a URL for web_fetch (internal/web, through the egress guard). Its errors are
// read by the model: a refused address, a 404, an unsupported type, a page over the
// download cap.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (steward.WebPage, error)
}

// Searcher answers web_search (internal/web: Gemini grounding or SearXNG). Its errors are
// read by the model.
type Searcher interface {
	Search(ctx context.Context, query string, maxResults int) (steward.SearchResult, error)
}

// Tools returns the web's tools: web_fetch reading through f and, when there is a search
// backend s, web_search.
func Tools(f Fetcher, s Searcher) []tools.Tool {
	if s == nil {
		return []tools.Tool{Fetch(f)}
	}
	return []tools.Tool{Fetch(f), Search(s)}
}

// Defaults and bounds of web_search's arguments.
const (
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
	if err := tools.CheckLength("url", a.URL, 1, 4096); err != nil {
		return err
	}
	if err := tools.OrDefaultIn("max_chars", &a.MaxChars, tools.DefaultMaxChars, tools.MaxMaxChars); err != nil {
		return err
	}
	return nil
}

// Fetch returns the web_fetch tool (read) reading pages through f. Its output, like
// every tool result, reaches the model only inside a data block (internal/agent); it taints
// the turn, and it is External: its URL can carry data out (docs/ARCHITECTURE.md §3).
func Fetch(f Fetcher) tools.Tool {
	t := webFetchTool(f)
	t.External, t.Untrusted = true, true
	return t
}

func webFetchTool(f Fetcher) tools.Tool {
	return tools.Say(tools.New("web_fetch",
		"Read a web page or a JSON or text document by URL (http or https). HTML comes back as its readable text "+
			"with links as (URL) after their text. The text is cut at max_chars (default 20000); the result says when.",
		steward.KindRead,
		func(ctx context.Context, _ tools.Env, a webFetchArgs) (any, error) {
			if f == nil {
				return nil, errors.New("web_fetch has no fetcher")
			}
			p, err := f.Fetch(ctx, a.URL)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, &tools.ArgError{Field: "url", Msg: err.Error(), Err: err}
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
	if err := tools.CheckLength("query", a.Query, 1, 500); err != nil {
		return err
	}
	if err := tools.OrDefaultIn("max_results", &a.MaxResults, defaultMaxResults, maxMaxResults); err != nil {
		return err
	}
	return nil
}

// Search returns the web_search tool (read) searching through s. Its output reaches
// the model only inside a data block (internal/agent) and taints the turn.
func Search(s Searcher) tools.Tool {
	t := webSearchTool(s)
	t.Untrusted = true
	return t
}

func webSearchTool(s Searcher) tools.Tool {
	return tools.Say(tools.New("web_search",
		"Search the web. Returns a short answer when available and the sources (title, URL); "+
			"use web_fetch to read a source.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a webSearchArgs) (any, error) {
			if s == nil {
				return nil, errors.New("web_search has no search backend")
			}
			res, err := s.Search(ctx, a.Query, a.MaxResults)
			env.Spent(res.Model, res.Usage)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, &tools.ArgError{Field: "query", Msg: "the search failed: " + err.Error(), Err: err}
			}
			if len(res.Sources) > a.MaxResults {
				res.Sources = res.Sources[:a.MaxResults]
			}
			if res.Sources == nil {
				res.Sources = []steward.SearchSource{}
			}
			return res, nil
		}), sayWebSearch, saidWebSearch)
}

func sayWebFetch(a webFetchArgs) string { return "Fetch " + tools.Site(a.URL) }

func saidWebFetch(a webFetchArgs, o struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}) string {
	if t := strings.TrimSpace(o.Title); t != "" {
		return "Read " + tools.Quote(t)
	}
	return "Read " + tools.Site(cmp.Or(o.URL, a.URL))
}

func sayWebSearch(a webSearchArgs) string { return "Search the web for " + tools.Quote(a.Query) }

func saidWebSearch(_ webSearchArgs, o steward.SearchResult) string {
	return "Found " + tools.Count(len(o.Sources), "source")
}
