package doctext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ledongthuc/pdf"
)

// Bounds of a PDF's page tree: the pages read, how deep /Pages nodes nest, and the nodes
// visited. The tree is walked here rather than by the library's Page(i), which trusts
// /Count (4e18 pages) and follows /Kids into itself forever.
const (
	MaxPDFPages     = 5000
	maxPDFTreeDepth = 64
	maxPDFNodes     = 4*MaxPDFPages + 1000
)

// extractPDF reads a PDF's text page by page. The library panics on some malformed files:
// a panic is a corrupt document. What the library does inside one page (resolving objects,
// inflating streams) is bounded by the sandbox, not here.
func extractPDF(ctx context.Context, data []byte) (out []Section, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, refuse(ReasonCorrupt, "the PDF is corrupt")
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return nil, refuse(ReasonEncrypted, "the PDF is password-protected (encrypted); upload an unprotected copy")
	case err != nil:
		return nil, refuse(ReasonCorrupt, "the PDF is corrupt: %v", err)
	case !r.Trailer().Key("Encrypt").IsNull():
		return nil, refuse(ReasonEncrypted, "the PDF is encrypted; upload an unprotected copy")
	}
	pages, err := pdfPages(r.Trailer().Key("Root").Key("Pages"))
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, refuse(ReasonCorrupt, "the PDF has no pages")
	}
	budget := int64(MaxStreamBytes)
	size := 0
	for i, p := range pages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := inheritsFinitely(p); err != nil {
			return nil, err
		}
		if budget, err = inflated(p.V.Key("Contents"), budget); err != nil {
			return nil, err
		}
		text, err := p.GetPlainText(nil)
		if err != nil {
			return nil, refuse(ReasonCorrupt, "the PDF's page %d is corrupt: %v", i+1, err)
		}
		size += len(text)
		if size > MaxTextBytes {
			return nil, overText("PDF")
		}
		out = append(out, Section{Label: fmt.Sprintf("page %d", i+1), Text: text})
	}
	return out, nil
}

// pdfPages walks the page tree from its root, in order, refusing a tree deeper than
// maxPDFTreeDepth, with more than MaxPDFPages pages or more than maxPDFNodes nodes (a /Kids
// that names its own node, or a node twice, is caught by these).
func pdfPages(root pdf.Value) ([]pdf.Page, error) {
	type node struct {
		v     pdf.Value
		depth int
	}
	var pages []pdf.Page
	stack := []node{{root, 0}}
	for visited := 0; len(stack) > 0; visited++ {
		if visited == maxPDFNodes {
			return nil, refuse(ReasonTooComplex, "the PDF's page tree has more than %d nodes", maxPDFNodes)
		}
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n.v.Key("Type").Name() {
		case "Page":
			if len(pages) == MaxPDFPages {
				return nil, refuse(ReasonTooComplex, "the PDF has more than %d pages", MaxPDFPages)
			}
			pages = append(pages, pdf.Page{V: n.v})
		case "Pages":
			if n.depth == maxPDFTreeDepth {
				return nil, refuse(ReasonTooComplex, "the PDF's page tree nests more than %d deep", maxPDFTreeDepth)
			}
			kids := n.v.Key("Kids")
			if kids.Len() > maxPDFNodes {
				return nil, refuse(ReasonTooComplex, "the PDF's page tree has more than %d nodes", maxPDFNodes)
			}
			for i := kids.Len() - 1; i >= 0; i-- { // the first kid on top
				stack = append(stack, node{kids.Index(i), n.depth + 1})
			}
		}
	}
	return pages, nil
}

// inheritsFinitely refuses a page whose /Parent chain does not end within
// maxPDFTreeDepth: the library looks up inherited resources along it without a bound.
func inheritsFinitely(p pdf.Page) error {
	v := p.V
	for range maxPDFTreeDepth + 1 {
		if v = v.Key("Parent"); v.IsNull() {
			return nil
		}
	}
	return refuse(ReasonTooComplex, "the PDF's page tree nests more than %d deep", maxPDFTreeDepth)
}

// inflated reads a page's content streams, decompressed, counting them against budget (the
// bytes left): a decompression bomb is refused before the text extractor inflates it.
func inflated(contents pdf.Value, budget int64) (int64, error) {
	streams := []pdf.Value{contents}
	if contents.Kind() == pdf.Array {
		if contents.Len() > maxPDFNodes {
			return 0, refuse(ReasonTooComplex, "a page of the PDF has more than %d content streams", maxPDFNodes)
		}
		streams = streams[:0]
		for i := 0; i < contents.Len(); i++ {
			streams = append(streams, contents.Index(i))
		}
	}
	for _, s := range streams {
		if s.Kind() != pdf.Stream {
			continue
		}
		rc := s.Reader()
		n, err := io.Copy(io.Discard, io.LimitReader(rc, budget+1))
		rc.Close()
		if err != nil {
			return 0, refuse(ReasonCorrupt, "the PDF's content is corrupt: %v", err)
		}
		if budget -= n; budget < 0 {
			return 0, refuse(ReasonBomb, "the PDF's content inflates to more than %d MB", MaxStreamBytes>>20)
		}
	}
	return budget, nil
}
