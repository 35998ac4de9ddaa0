package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/steward"
)

// Gemini answers web_search with a separate Gemini call grounded in Google Search: the
// answer is the model's text, the sources the web chunks of its grounding metadata.
type Gemini struct {
	Client *genai.Client
	// Model is the Gemini model called (the fast model).
	Model string
}

// NewGemini returns a Gemini searcher; baseURL overrides the endpoint (tests, gateways).
func NewGemini(ctx context.Context, apiKey, baseURL, model string, httpClient *http.Client) (*Gemini, error) {
	c, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      apiKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  httpClient,
		HTTPOptions: genai.HTTPOptions{BaseURL: baseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("web search: create Gemini client: %w", err)
	}
	return &Gemini{Client: c, Model: model}, nil
}

// Search asks the model with the Google Search tool and returns its short answer and the
// grounding sources, without duplicates.
func (g *Gemini) Search(ctx context.Context, query string, maxResults int) (steward.SearchResult, error) {
	prompt := "Search the web and answer briefly (at most a few sentences), citing nothing inline: " + query
	resp, err := g.Client.Models.GenerateContent(ctx, g.Model, genai.Text(prompt), &genai.GenerateContentConfig{
		Tools:           []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
		MaxOutputTokens: 1024,
	})
	if err != nil {
		return steward.SearchResult{}, fmt.Errorf("Gemini search: %w", err)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return steward.SearchResult{}, errors.New("Gemini search returned no answer")
	}
	res := steward.SearchResult{Answer: strings.TrimSpace(resp.Text()), Sources: []steward.SearchSource{}}
	seen := map[string]bool{}
	if md := resp.Candidates[0].GroundingMetadata; md != nil {
		for _, ch := range md.GroundingChunks {
			if ch == nil || ch.Web == nil || ch.Web.URI == "" || seen[ch.Web.URI] {
				continue
			}
			seen[ch.Web.URI] = true
			res.Sources = append(res.Sources, steward.SearchSource{Title: ch.Web.Title, URL: ch.Web.URI})
			if len(res.Sources) == maxResults {
				break
			}
		}
	}
	return res, nil
}

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
