package config

import (
	"net/netip"
	"strings"
	"time"
)

// Egress is what Steward reaches outside on the owner's behalf: the private addresses the
// SSRF guard lets through, the search engine, and remote MCP servers' bound.
type Egress struct {
	// EgressAllow lists the private addresses (IP:port) that web_fetch and notification
	// delivery may reach although the SSRF guard refuses every other private address
	// (STEWARD_EGRESS_ALLOW, comma-separated).
	EgressAllow []netip.AddrPort
	// SearchURL is a SearXNG instance web_search queries instead of Gemini with Google Search
	// grounding (STEWARD_SEARCH_URL).
	SearchURL string
	// MCPTimeout bounds listing a remote MCP server's tools and each call of one
	// (STEWARD_MCP_TIMEOUT, 20s by default).
	MCPTimeout time.Duration
}

// egress reads the Egress area.
func (r *reader) egress() Egress {
	e := Egress{
		EgressAllow: r.addrPorts("STEWARD_EGRESS_ALLOW"),
		SearchURL:   r.str("STEWARD_SEARCH_URL", ""),
		MCPTimeout:  r.duration("STEWARD_MCP_TIMEOUT", 20*time.Second),
	}
	r.httpURL("STEWARD_SEARCH_URL", e.SearchURL)
	return e
}

// addrPorts parses comma-separated IP:port entries ([::1]:8443 for IPv6). Host names are
// refused: an allowance is one fixed address, which DNS cannot move.
func (r *reader) addrPorts(name string) []netip.AddrPort {
	var out []netip.AddrPort
	for _, entry := range strings.Split(r.str(name, ""), ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		ap, err := netip.ParseAddrPort(entry)
		if err != nil || ap.Port() == 0 {
			r.fail(name, entry, "must be IP:port entries, comma-separated (e.g. 10.0.0.5:8080,[fd00::1]:443)")
			continue
		}
		out = append(out, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	return out
}
