package app

import (
	"context"
	"net/netip"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/calendar"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/mail"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// newAccounts builds the owner's mail and calendar accounts: every connection through a
// guard of STEWARD_EGRESS_ALLOW's exemptions (the mail ports for IMAP and SMTP; https, and
// http only to an exempt address, for CalDAV: docs/MAIL.md).
func newAccounts(cfg config.Config, st *store.Store, sealer *secret.Sealer, lookup func(context.Context, string) ([]netip.Addr, error), now steward.Clock) *accounts.Service {
	mailGuard := egress.NewGuard(egress.Options{Allow: cfg.EgressAllow, Lookup: lookup, Ports: mail.Ports})
	calGuard := egress.NewGuard(egress.Options{Allow: cfg.EgressAllow, Lookup: lookup, AllowHTTP: true, Timeout: calendar.DefaultTimeout})
	return &accounts.Service{Store: st, Sealer: sealer, Now: now,
		Mail: &mail.Client{Guard: mailGuard}, Calendar: &calendar.Client{Guard: calGuard}}
}
