package markdown

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestHTML: Markdown becomes the elements a reader expects.
func TestHTML(t *testing.T) {
	for src, want := range map[string]string{
		"Your tasks:\n- buy milk\n- call mom": "<p>Your tasks:</p>\n<ul>\n<li>buy milk</li>\n<li>call mom</li>\n</ul>\n",
		"**bold** and `code`":                 "<p><strong>bold</strong> and <code>code</code></p>\n",
		"[docs](https://example.com/a)":       `<p><a href="https://example.com/a" rel="noopener noreferrer">docs</a></p>` + "\n",
		"see https://example.com":             `<p>see <a href="https://example.com" rel="noopener noreferrer">https://example.com</a></p>` + "\n",
		"| a | b |\n|---|--:|\n| 1 | 2 |":     "<table>\n<thead>\n<tr>\n<th>a</th>\n<th style=\"text-align:right\">b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td style=\"text-align:right\">2</td>\n</tr>\n</tbody>\n</table>\n",
		"5 < 6 & \"x\"":                       "<p>5 &lt; 6 &amp; &#34;x&#34;</p>\n",
	} {
		if got := HTML(src); got != want {
			t.Errorf("HTML(%q) =\n%q\nwant\n%q", src, got, want)
		}
	}
}

// TestHTMLIsSafe: a script, an event handler, a javascript: or data: link and raw HTML never
// survive, whatever form they come in.
func TestHTMLIsSafe(t *testing.T) {
	for _, src := range []string{
		"<script>alert(1)</script>",
		"hi <script>alert(1)</script> there",
		"<img src=x onerror=alert(1)>",
		"[click](javascript:alert(1))",
		"[click](JaVaScRiPt:alert(1))",
		"[click](java\tscript:alert(1))",
		"[click](&#106;avascript:alert(1))",
		"<a href=\"javascript:alert(1)\">x</a>",
		"[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
		"![img](javascript:alert(1))",
		"<javascript:alert(1)>",
		"```\n</code></pre><script>alert(1)</script>\n```",
		"<div onclick=\"alert(1)\">x</div>",
		"<style>body{display:none}</style>",
		"<iframe src=\"https://evil.example\"></iframe>",
	} {
		out := HTML(src)
		if problem := unsafeHTML(out); problem != "" {
			t.Errorf("HTML(%q) = %q: %s", src, out, problem)
		}
	}
	// What a user typed as text stays visible as text.
	if out := HTML("<script>alert(1)</script>"); strings.Contains(out, "<script") {
		t.Errorf("a script tag survived: %q", out)
	}
}

// unsafeHTML parses out as a browser would and says what in it could run or load something.
func unsafeHTML(out string) string {
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		return "unparsable: " + err.Error()
	}
	var problem string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "style", "iframe", "img", "object", "embed", "form", "input", "svg", "math", "link", "meta", "base":
				problem = "element " + n.Data
			}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				v := strings.ToLower(strings.Join(strings.Fields(a.Val), ""))
				switch {
				case strings.HasPrefix(k, "on"):
					problem = "event attribute " + k
				case (k == "href" || k == "src") && (strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "data:") || strings.HasPrefix(v, "vbscript:")):
					problem = "dangerous " + k + " " + a.Val
				case k == "href" && n.Data == "a" && !hasRel(n):
					problem = "link without rel=noopener noreferrer"
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return problem
}

func hasRel(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key == "rel" && a.Val == rel {
			return true
		}
	}
	return false
}

// FuzzHTML: no input makes HTML emit anything that runs or loads.
func FuzzHTML(f *testing.F) {
	for _, s := range []string{"- a\n- b", "<script>x</script>", "[a](javascript:x)", "<b onclick=x>", "| a |\n|---|\n| <x> |", "`<img>`", "https://x.example/<script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out := HTML(src)
		if problem := unsafeHTML(out); problem != "" {
			t.Fatalf("HTML(%q) = %q: %s", src, out, problem)
		}
	})
}
