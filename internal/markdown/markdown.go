// Package markdown renders the model's Markdown as HTML that is safe to put in a page: goldmark
// (CommonMark and GitHub's tables, strikethrough and autolinks) with raw HTML off, then
// bluemonday with an allow-list of the elements Markdown makes and nothing else — no script,
// style, image, form or event attribute, and links only to http, https, mailto or this site,
// each with rel="noopener noreferrer".
package markdown

import (
	"bytes"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// rel is every link's rel attribute.
const rel = "noopener noreferrer"

// md is goldmark without html.WithUnsafe: raw HTML in the source is left out, and
// javascript: and other dangerous link destinations are dropped.
var md = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkRel{}, 100))),
)

// policy allows what md renders and nothing more; the sanitizer is the last word even if a
// goldmark extension or bug let something through.
var policy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote",
		"ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
		"table", "thead", "tbody", "tr", "th", "td")
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^[0-9]{1,9}$`)).OnElements("ol")
	p.AllowAttrs("style").Matching(regexp.MustCompile(`^text-align:(left|right|center)$`)).OnElements("th", "td")
	p.AllowStandardURLs() // http, https, mailto and relative; never javascript: or data:
	p.AllowAttrs("href").OnElements("a")
	p.AllowAttrs("rel").Matching(regexp.MustCompile(`^` + rel + `$`)).OnElements("a")
	p.RequireNoFollowOnLinks(false) // AllowStandardURLs turns it on; the links are the model's, not spam
	p.RequireNoReferrerOnLinks(true)
	return p
}()

// HTML renders Markdown src as sanitized HTML.
func HTML(src string) string {
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		// goldmark's renderer fails only when its writer does; a bytes.Buffer does not.
		return policy.Sanitize("<p>" + src + "</p>")
	}
	return policy.Sanitize(buf.String())
}

// linkRel gives every link rel="noopener noreferrer".
type linkRel struct{}

func (linkRel) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && (n.Kind() == ast.KindLink || n.Kind() == ast.KindAutoLink) {
			n.SetAttributeString("rel", []byte(rel))
		}
		return ast.WalkContinue, nil
	})
}
