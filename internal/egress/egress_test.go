package egress_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"testing"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
)

// guardFor is the production guard plus the test's only allowance: the exact address of
// allowed (nil: nothing allowed).
func guardFor(allowed *egresstest.Server, t *testing.T) *egress.Guard {
	opts := egress.Options{Lookup: egresstest.Lookup}
	if allowed != nil {
		opts.Allow = []netip.AddrPort{allowed.Addr()}
		opts.RootCAs = allowed.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	}
	return egress.NewGuard(opts)
}

// TestGuardRefusesBeforeConnecting: every refused destination fails with ErrBlocked, and a
// live server on loopback behind them sees no connection at all.
func TestGuardRefusesBeforeConnecting(t *testing.T) {
	t.Parallel()
	victim := egresstest.NewTLSServer(t, func(w http.ResponseWriter, _ *http.Request) {})
	client := guardFor(nil, t).Client()
	hosts := []string{
		"127.0.0.1", "localhost", "[::1]", "169.254.169.254", "[fd00:ec2::254]", "[::ffff:169.254.169.254]",
		"0x7f000001", "127.1", "10.0.0.1", "2130706433", "0177.0.0.1", "[::ffff:127.0.0.1]", "[::]", "0.0.0.0",
		"100.64.0.1", "224.0.0.1", "[fe80::1]", "[fc00::1]", "[64:ff9b::7f00:1]", "192.168.1.1", "172.16.0.1",
		"foo.localhost", "metadata.google.internal",
		"rebind.example", "metadata.example", "mapped.example", "private.example", "dual.example", "cgnat.example",
	}
	for _, host := range hosts {
		for _, port := range []string{"", fmt.Sprint(victim.Addr().Port())} {
			url := "https://" + host
			if port != "" {
				url += ":" + port
			}
			t.Run(url, func(t *testing.T) {
				resp, err := client.Get(url + "/hook")
				if err == nil {
					resp.Body.Close()
					t.Fatalf("GET %s succeeded", url)
				}
				if !errors.Is(err, egress.ErrBlocked) {
					t.Fatalf("GET %s: %v, want ErrBlocked (refused before connecting)", url, err)
				}
			})
		}
	}
	if n := victim.Conns.Load(); n != 0 {
		t.Fatalf("the loopback server saw %d connections", n)
	}
}

// TestGuardRedirects: an allowed server redirecting to loopback (by literal, by name, or to
// another port of its own address) is refused before the second connection.
func TestGuardRedirects(t *testing.T) {
	t.Parallel()
	victim := egresstest.NewTLSServer(t, func(w http.ResponseWriter, _ *http.Request) {})
	vp := victim.Addr().Port()
	targets := []string{
		fmt.Sprintf("https://127.0.0.1:%d/", vp),
		fmt.Sprintf("https://localhost:%d/", vp),
		fmt.Sprintf("https://example.com:%d/", vp), // resolves to 127.0.0.1, a port not allowed
		fmt.Sprintf("https://rebind.example:%d/", vp),
		"https://169.254.169.254/latest/meta-data/",
		fmt.Sprintf("http://example.com:%d/", vp), // scheme downgrade
	}
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			allowed := egresstest.NewTLSServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target, http.StatusFound)
			})
			client := guardFor(allowed, t).Client()
			resp, err := client.Get(fmt.Sprintf("https://example.com:%d/start", allowed.Addr().Port()))
			if err == nil {
				resp.Body.Close()
				t.Fatal("the redirect was followed")
			}
			if !errors.Is(err, egress.ErrBlocked) {
				t.Fatalf("redirect to %s: %v, want ErrBlocked", target, err)
			}
			if allowed.Hits.Load() != 1 {
				t.Fatalf("the allowed server was asked %d times, want 1", allowed.Hits.Load())
			}
		})
	}
	if n := victim.Conns.Load(); n != 0 {
		t.Fatalf("the redirect target saw %d connections", n)
	}
}

// TestGuardAllowance: the explicit test allowance reaches exactly its address, over https.
func TestGuardAllowance(t *testing.T) {
	t.Parallel()
	allowed := egresstest.NewTLSServer(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	g := guardFor(allowed, t)
	resp, err := g.Client().Get(fmt.Sprintf("https://example.com:%d/", allowed.Addr().Port()))
	if err != nil {
		t.Fatalf("the allowed test server: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for _, raw := range []string{
		"http://example.com/hook", "ftp://example.com/", "https:///nohost", "//example.com/", "https://exa mple.com/",
		"file:///etc/passwd", "gopher://example.com/",
	} {
		if _, err := g.CheckURL(raw); !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("CheckURL(%q) = %v, want ErrBlocked", raw, err)
		}
	}
	if _, err := g.CheckURL("https://hooks.slack.com/services/T0/B0/XXX"); err != nil {
		t.Errorf("a public https URL: %v", err)
	}
	dev := egress.NewGuard(egress.Options{AllowHTTP: true})
	if _, err := dev.CheckURL("http://ntfy.example.org/topic"); err != nil {
		t.Errorf("http with AllowHTTP: %v", err)
	}
	if _, err := dev.CheckURL("http://127.0.0.1/topic"); !errors.Is(err, egress.ErrBlocked) {
		t.Errorf("AllowHTTP must not allow loopback: %v", err)
	}
}
