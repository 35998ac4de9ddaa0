package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/document/documenttest"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/webtools"
	"github.com/stewardhq/steward/internal/web"
)

// fetchRegistry is the production web_fetch (egress client with http allowed) whose only
// allowances are the given servers' exact addresses, as STEWARD_EGRESS_ALLOW would give.
func fetchRegistry(t *testing.T, maxBytes int64, allowed ...*egresstest.Server) *tools.Registry {
	t.Helper()
	opts := egress.Options{AllowHTTP: true, Lookup: egresstest.Lookup}
	for _, s := range allowed {
		opts.Allow = append(opts.Allow, s.Addr())
	}
	reg, err := tools.NewRegistry(webtools.Fetch(&web.Fetcher{Client: egress.NewClient(opts), MaxBytes: maxBytes}))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// fetch runs web_fetch as the agent does and returns its output, or the error the model reads.
func fetch(t *testing.T, reg *tools.Registry, args map[string]any) (map[string]any, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	out, err := reg.Run(context.Background(), tools.Env{}, "web_fetch", raw)
	if err != nil {
		var argErr *tools.ArgError
		if !errors.As(err, &argErr) {
			t.Fatalf("web_fetch failed the turn instead of answering the model: %v", err)
		}
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

// TestWebFetchRefusesBeforeConnecting: every private, loopback, metadata and disguised
// destination is refused, and a live loopback server behind them accepts no connection.
func TestWebFetchRefusesBeforeConnecting(t *testing.T) {
	t.Parallel()
	victim := egresstest.NewServer(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "secret") })
	port := victim.Addr().Port()
	reg := fetchRegistry(t, 0)
	urls := []string{
		fmt.Sprintf("http://127.0.0.1:%d/", port),
		"http://127.0.0.1/",
		"http://10.0.0.1/",
		"http://169.254.169.254/latest/meta-data/",
		fmt.Sprintf("http://[::1]:%d/", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		"http://[::ffff:127.0.0.1]/",
		fmt.Sprintf("http://2130706433:%d/", port), // decimal 127.0.0.1
		"http://2130706433/",
		fmt.Sprintf("http://0177.0.0.1:%d/", port), // octal
		"http://0177.0.0.1/",
		"http://0x7f000001/", // hex
		"http://127.1/",
		"http://[64:ff9b::7f00:1]/", // NAT64 embedding 127.0.0.1
		"http://[64:ff9b::a00:1]/",  // NAT64 embedding 10.0.0.1
		fmt.Sprintf("http://localhost:%d/", port),
		"http://localhost/",
		"http://rebind.example/", // resolves to loopback
		fmt.Sprintf("http://rebind.example:%d/", port),
		"http://metadata.example/",
		"http://mapped.example/",
		"http://[::]/", "http://0.0.0.0/", "http://224.0.0.1/", "http://[fe80::1]/", "http://[fd00:ec2::254]/",
		"ftp://example.com/", "file:///etc/passwd",
	}
	for _, u := range urls {
		t.Run(u, func(t *testing.T) {
			out, err := fetch(t, reg, map[string]any{"url": u})
			if err == nil {
				t.Fatalf("web_fetch %s = %v, want refused", u, out)
			}
			if !strings.Contains(err.Error(), "refused") {
				t.Fatalf("web_fetch %s: %v, want a refusal", u, err)
			}
		})
	}
	if n := victim.Conns.Load(); n != 0 {
		t.Fatalf("the loopback server accepted %d connections", n)
	}
}

// TestWebFetchRedirectToLoopback: an allowed server redirecting to another loopback port (by
// literal, by name, by a disguised form) is refused before the second connection.
func TestWebFetchRedirectToLoopback(t *testing.T) {
	t.Parallel()
	victim := egresstest.NewServer(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "secret") })
	port := victim.Addr().Port()
	for _, target := range []string{
		fmt.Sprintf("http://127.0.0.1:%d/", port),
		fmt.Sprintf("http://rebind.example:%d/", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		fmt.Sprintf("http://2130706433:%d/", port),
		"http://169.254.169.254/latest/meta-data/",
	} {
		t.Run(target, func(t *testing.T) {
			allowed := egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) })
			out, err := fetch(t, fetchRegistry(t, 0, allowed), map[string]any{"url": allowed.URL + "/start"})
			if err == nil || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("redirect to %s: %v %v, want a refusal", target, out, err)
			}
			if allowed.Hits.Load() != 1 {
				t.Fatalf("the allowed server was asked %d times, want 1", allowed.Hits.Load())
			}
		})
	}
	if n := victim.Conns.Load(); n != 0 {
		t.Fatalf("the redirect target accepted %d connections", n)
	}
}

// TestWebFetchRedirectLimit: at most 5 redirects are followed.
func TestWebFetchRedirectLimit(t *testing.T) {
	t.Parallel()
	var s *egresstest.Server
	s = egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("%s/%d", s.URL, s.Hits.Load()), http.StatusFound)
	})
	if out, err := fetch(t, fetchRegistry(t, 0, s), map[string]any{"url": s.URL + "/"}); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("endless redirects: %v %v", out, err)
	}
	if n := s.Hits.Load(); n != 6 {
		t.Fatalf("the server was asked %d times, want 6 (the first request and 5 redirects)", n)
	}
}

const article = `<!doctype html><html><head><title>The Lighthouse Keepers | Coast Weekly</title>
<script>var tracker = "SCRIPT-JUNK";</script></head><body>
<nav class="menu"><a href="/">Home</a> | <a href="/shop">NAV-JUNK Shop</a> | <a href="/login">Login</a></nav>
<header class="site-header"><div class="banner">Subscribe now! BANNER-JUNK</div></header>
<main><article>
<h1>The Lighthouse Keepers</h1>
<p>For more than a century the keepers of the northern light lived on a rock three miles from shore,
trimming wicks, winding the clockwork that turned the lens and logging every passing ship in a ledger
that is now kept in the county archive.</p>
<p>The last keeper, Margaret Hale, left the station in 1987 when the light was automated. She still
remembers the storms of the winter of 1962, when supply boats could not land for six weeks and the
keepers rationed lamp oil and flour while the beam kept turning every night without fail.</p>
<p>Her logbooks describe fog signals, shipwrecks averted and the slow routine of painting and polishing
that filled the long days. Historians say the ledgers are among the most complete records of coastal
traffic anywhere, and <a href="https://archive.example.org/ledgers">the digitised ledgers</a> are open to all.</p>
</article></main>
<aside class="sidebar">Related: FOOTER-JUNK ten best beaches</aside>
<footer class="footer">Copyright Coast Weekly. FOOTER-JUNK privacy cookies</footer>
</body></html>`

// TestWebFetchReadableHTML: a page's main content comes back as text with its link, without
// the navigation, banner, script and footer around it.
func TestWebFetchReadableHTML(t *testing.T) {
	t.Parallel()
	s := egresstest.NewServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, article)
	})
	out, err := fetch(t, fetchRegistry(t, 0, s), map[string]any{"url": s.URL + "/story"})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := out["text"].(string)
	for _, want := range []string{"Margaret Hale, left the station in 1987", "winter of 1962", "the digitised ledgers (https://archive.example.org/ledgers)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	for _, junk := range []string{"NAV-JUNK", "BANNER-JUNK", "SCRIPT-JUNK", "FOOTER-JUNK"} {
		if strings.Contains(text, junk) {
			t.Errorf("the text keeps %s:\n%s", junk, text)
		}
	}
	if out["content_type"] != "text/html" || out["url"] != s.URL+"/story" || out["truncated"] != nil {
		t.Errorf("result: %v", out)
	}
	if title, _ := out["title"].(string); !strings.Contains(title, "Lighthouse Keepers") {
		t.Errorf("title %q", title)
	}
}

// TestWebFetchTypes: JSON and text pass through, a PDF is read by the document extractor; a
// corrupt PDF and other types are clear errors.
func TestWebFetchTypes(t *testing.T) {
	t.Parallel()
	bodies := map[string]struct{ ctype, body string }{
		"/j":   {"application/json", `{"temperature": 21.5, "unit": "C"}`},
		"/t":   {"text/plain; charset=utf-8", "plain <b>text</b> stays"},
		"/l":   {"text/plain; charset=iso-8859-1", "caf\xe9"},
		"/pdf": {"application/pdf", "%PDF-1.7 ..."},
		"/doc": {"application/pdf", string(documenttest.PDF(t, "Page one.", "The second page names the harbour master."))},
		"/png": {"image/png", "\x89PNG\r\n"},
		"/404": {"", ""},
	}
	s := egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.URL.Path]
		if !ok || b.ctype == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", b.ctype)
		fmt.Fprint(w, b.body)
	})
	reg := fetchRegistry(t, 0, s)
	for path, want := range map[string]string{"/j": bodies["/j"].body, "/t": bodies["/t"].body, "/l": "café"} {
		out, err := fetch(t, reg, map[string]any{"url": s.URL + path})
		if err != nil || out["text"] != want {
			t.Errorf("%s: %v %v, want text %q", path, out, err, want)
		}
	}
	if out, err := fetch(t, reg, map[string]any{"url": s.URL + "/doc"}); err != nil || !strings.Contains(fmt.Sprint(out["text"]), "The second page names the harbour master.") {
		t.Errorf("/doc: %v %v, want the PDF's second page", out, err)
	}
	for path, want := range map[string]string{
		"/pdf": "the PDF could not be read: invalid: the PDF is corrupt",
		"/png": "content type image/png is not supported",
		"/404": "the server answered 404 Not Found",
	} {
		if out, err := fetch(t, reg, map[string]any{"url": s.URL + path}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v %v, want an error saying %q", path, out, err, want)
		}
	}
}

// TestWebFetchCaps: a body over the download cap is refused (with or without a
// Content-Length); text over max_chars (default 20,000) is cut and the result says so.
func TestWebFetchCaps(t *testing.T) {
	t.Parallel()
	s := egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		switch r.URL.Path {
		case "/big":
			fmt.Fprint(w, strings.Repeat("x", 2000))
		case "/big-chunked":
			for range 20 {
				fmt.Fprint(w, strings.Repeat("y", 100))
				w.(http.Flusher).Flush()
			}
		case "/long":
			fmt.Fprint(w, strings.Repeat("é", 25000))
		}
	})
	small := fetchRegistry(t, 1000, s)
	for _, p := range []string{"/big", "/big-chunked"} {
		if out, err := fetch(t, small, map[string]any{"url": s.URL + p}); err == nil || !strings.Contains(err.Error(), "download cap of 1000 bytes") {
			t.Errorf("%s: %v %v, want the download cap", p, out, err)
		}
	}
	reg := fetchRegistry(t, 0, s)
	out, err := fetch(t, reg, map[string]any{"url": s.URL + "/long"})
	if err != nil {
		t.Fatal(err)
	}
	if text := out["text"].(string); text != strings.Repeat("é", 20000) || out["truncated"] != true ||
		out["note"] != "the text was cut at 20000 of 25000 characters" {
		t.Errorf("default cap: %d characters, truncated=%v, note=%v", len([]rune(text)), out["truncated"], out["note"])
	}
	out, err = fetch(t, reg, map[string]any{"url": s.URL + "/long", "max_chars": 10})
	if err != nil || out["text"] != strings.Repeat("é", 10) || out["note"] != "the text was cut at 10 of 25000 characters" {
		t.Errorf("max_chars 10: %v %v", out, err)
	}
	for _, bad := range []int{-1, 100001} {
		if _, err := fetch(t, reg, map[string]any{"url": s.URL + "/long", "max_chars": bad}); err == nil || !strings.Contains(err.Error(), "max_chars") {
			t.Errorf("max_chars %d: %v", bad, err)
		}
	}
}

// TestWebFetchHostilePages: a page on the web goes through the same bounded reader
// as an upload — a PDF whose page tree is its own kid and a page of a million nested <div>s
// come back as a tool error saying why, at once, not a fetch that never ends.
func TestWebFetchHostilePages(t *testing.T) {
	t.Parallel()
	pages := map[string]documenttest.Hostile{}
	for _, h := range documenttest.HostileCorpus() {
		pages["/"+h.Name] = h
	}
	s := egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		ct := "text/html; charset=utf-8"
		if strings.HasSuffix(r.URL.Path, ".pdf") {
			ct = "application/pdf"
		}
		w.Header().Set("Content-Type", ct)
		w.Write(pages[r.URL.Path].Data)
	})
	reg := fetchRegistry(t, 8<<20, s)
	for path, want := range map[string]string{"/selfkids.pdf": "page tree nests more than", "/nested.html": "nests elements more than 512 deep"} {
		start := time.Now()
		_, err := fetch(t, reg, map[string]any{"url": s.URL + path})
		if err == nil || !strings.Contains(err.Error(), want) || time.Since(start) > 5*time.Second {
			t.Errorf("web_fetch %s = %v after %v; want an error saying %q at once", path, err, time.Since(start), want)
		}
	}
}
