package steward

// WebPage is what a fetcher read from a URL, already as text: readable text for HTML, the body
// itself for JSON and plain text (web_fetch and save_document read it; internal/web fetches
// it through the egress guard).
type WebPage struct {
	// URL is the address the text came from, after redirects.
	URL string
	// ContentType is the media type the server declared (or that was sniffed).
	ContentType string
	// Title is the page's title, when it has one.
	Title string
	// Text is the page's content.
	Text string
}

// SearchSource is one web search result.
type SearchSource struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// SearchResult is what a web search found: a short answer when the backend writes one
// (Gemini with Google Search grounding) and the sources.
type SearchResult struct {
	Answer  string         `json:"answer,omitempty"`
	Sources []SearchSource `json:"sources"`
	// Model and Usage are the model call a search backend made (Gemini's grounded search),
	// for the turn's cost; empty for a backend that calls no model (SearXNG).
	Model string `json:"-"`
	Usage Usage  `json:"-"`
}
