package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
)

// SearXNG answers web_search from a SearXNG instance's JSON API (/search?q=…&format=json;
// the instance must enable the json format), through an egress client.
type SearXNG struct {
	// Client is an egress client; a private instance needs its address in STEWARD_EGRESS_ALLOW.
	Client *http.Client
	// BaseURL is the instance's root, e.g. https://searx.example.org.
	BaseURL string
}

// maxSearchBody caps a SearXNG answer.
const maxSearchBody = 2 << 20

// Search queries the instance and returns its first results.
func (s *SearXNG) Search(ctx context.Context, query string, maxResults int) (steward.SearchResult, error) {
	u, err := url.Parse(strings.TrimSuffix(s.BaseURL, "/") + "/search")
	if err != nil {
		return steward.SearchResult{}, fmt.Errorf("STEWARD_SEARCH_URL is not a URL: %w", err)
	}
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return steward.SearchResult{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.Client.Do(req)
	if err != nil {
		return steward.SearchResult{}, fmt.Errorf("SearXNG: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return steward.SearchResult{}, fmt.Errorf("SearXNG answered %s", resp.Status)
	}
	var body struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxSearchBody)).Decode(&body); err != nil {
		return steward.SearchResult{}, fmt.Errorf("SearXNG sent no readable JSON: %w", err)
	}
	res := steward.SearchResult{Sources: []steward.SearchSource{}}
	for _, r := range body.Results {
		if r.URL == "" {
			continue
		}
		res.Sources = append(res.Sources, steward.SearchSource{Title: r.Title, URL: r.URL, Snippet: r.Content})
		if len(res.Sources) == maxResults {
			break
		}
	}
	return res, nil
}
