package doctext

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"strings"

	"codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Bounds of an HTML page: its elements and how deep they nest. The HTML parser and
// readability walk the tree by recursion and search the open elements for every tag, so a
// page of a million nested <div>s costs time squared; the tokenizer counts both first, in
// one pass.
const (
	MaxHTMLElements = 200_000
	MaxHTMLDepth    = 512
)

// extractHTML keeps an HTML page's main content as text (go-readability), with each link's
// absolute URL after its text (against pageURL when the page came from the web).
func extractHTML(ctx context.Context, data []byte, declared, pageURL string) (string, []Section, error) {
	r, err := charset.NewReader(bytes.NewReader(data), declared)
	if err != nil {
		return "", nil, refuse(ReasonCorrupt, "the page's charset is not readable")
	}
	// A charset conversion can at most triple the bytes (a single-byte charset to UTF-8).
	body, err := io.ReadAll(io.LimitReader(r, 3*int64(len(data))+4))
	if err != nil {
		return "", nil, refuse(ReasonCorrupt, "the page's charset is not readable")
	}
	if err := checkHTML(ctx, body); err != nil {
		return "", nil, err
	}
	var base *url.URL
	if pageURL != "" {
		base, _ = url.Parse(pageURL)
	}
	article, err := readability.FromReader(bytes.NewReader(body), base)
	if err != nil {
		return "", nil, refuse(ReasonCorrupt, "the page could not be read: %v", err)
	}
	if article.Node == nil {
		return article.Title(), []Section{{}}, nil
	}
	keepLinks(article.Node)
	return article.Title(), []Section{{Text: render.InnerText(article.Node)}}, nil
}

// voidOrOptional are the elements that never hold others (void) or that the parser closes by
// itself when a sibling starts (optional end tags): checkHTML does not count them as
// nesting.
var voidOrOptional = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true,
	"param": true, "keygen": true,
	"p": true, "li": true, "dt": true, "dd": true, "option": true, "optgroup": true, "tr": true,
	"td": true, "th": true, "tbody": true, "thead": true, "tfoot": true, "colgroup": true,
	"rb": true, "rt": true, "rtc": true, "rp": true, "html": true, "head": true, "body": true,
}

// checkHTML counts a page's elements and follows their nesting as the parser would (an end
// tag closes the innermost open element of its name; a stray one closes nothing), refusing a
// page past MaxHTMLElements or MaxHTMLDepth.
func checkHTML(ctx context.Context, body []byte) error {
	z := html.NewTokenizer(bytes.NewReader(body))
	var open []string
	elements := 0
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		switch z.Next() {
		case html.ErrorToken:
			return nil // io.EOF, or a read error of a bytes.Reader: none
		case html.StartTagToken:
			if elements++; elements > MaxHTMLElements {
				return refuse(ReasonTooComplex, "the page has more than %d elements", MaxHTMLElements)
			}
			name, _ := z.TagName()
			if voidOrOptional[string(name)] {
				continue
			}
			if open = append(open, string(name)); len(open) > MaxHTMLDepth {
				return refuse(ReasonTooComplex, "the page nests elements more than %d deep", MaxHTMLDepth)
			}
		case html.SelfClosingTagToken:
			if elements++; elements > MaxHTMLElements {
				return refuse(ReasonTooComplex, "the page has more than %d elements", MaxHTMLElements)
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			for i := len(open) - 1; i >= 0; i-- {
				if open[i] == string(name) {
					open = open[:i]
					break
				}
			}
		}
	}
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
