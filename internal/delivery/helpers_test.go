package delivery_test

import (
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
