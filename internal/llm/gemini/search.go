package gemini

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/steward"
)

// Searcher answers web_search with a separate Gemini call grounded in Google Search: the
// answer is the model's text, the sources the web chunks of its grounding metadata. It
// implements webtools.Searcher, the port web_search declares (internal/web's SearXNG is the
// other). It is safe for concurrent use.
type Searcher struct {
	client *genai.Client
	model  string
}

// NewSearcher returns a Searcher calling model (the fast model); baseURL overrides the
// endpoint (tests, gateways). It makes no request.
func NewSearcher(ctx context.Context, apiKey, baseURL, model string, httpClient *http.Client) (*Searcher, error) {
	c, err := newClient(ctx, apiKey, baseURL, httpClient)
	if err != nil {
		return nil, fmt.Errorf("web search: create Gemini client: %w", err)
	}
	return &Searcher{client: c, model: model}, nil
}

// Search asks the model with the Google Search tool and returns its short answer and the
// grounding sources, without duplicates.
func (s *Searcher) Search(ctx context.Context, query string, maxResults int) (steward.SearchResult, error) {
	prompt := "Search the web and answer briefly (at most a few sentences), citing nothing inline: " + query
	resp, err := s.client.Models.GenerateContent(ctx, s.model, genai.Text(prompt), &genai.GenerateContentConfig{
		Tools:           []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
		MaxOutputTokens: 1024,
	})
	if err != nil {
		return steward.SearchResult{}, fmt.Errorf("gemini search: %w", err)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return steward.SearchResult{}, errors.New("gemini search returned no answer")
	}
	res := steward.SearchResult{Answer: strings.TrimSpace(resp.Text()), Sources: []steward.SearchSource{},
		Model: cmp.Or(resp.ModelVersion, s.model), Usage: toUsage(resp.UsageMetadata)}
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
