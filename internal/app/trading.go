package app

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/tradingtools"
	"github.com/stewardhq/steward/internal/trading"
)

// newTrading builds the owner's brokerage (docs/TRADING.md): nil when STEWARD_TRADING is
// off. Alpaca is reached through the egress guard with its timeout (§8); plain http only
// when the operator configured an http URL (a local fake).
func newTrading(cfg config.Config, st *store.Store, sealer *secret.Sealer, lookup func(context.Context, string) ([]netip.Addr, error), now steward.Clock) *trading.Service {
	t := cfg.Trading
	if t.Mode != trading.Paper && t.Mode != trading.Alpaca {
		return nil
	}
	plain := strings.HasPrefix(t.AlpacaURL, "http://") || strings.HasPrefix(t.AlpacaDataURL, "http://")
	client := egress.NewClient(egress.Options{Allow: cfg.EgressAllow, Lookup: lookup, Timeout: t.Timeout, AllowHTTP: plain})
	return &trading.Service{Store: st, Sealer: sealer, Now: now,
		Config: trading.Config{Mode: t.Mode, OrderCapMinor: int64(t.OrderCap) * 100, DailyCapMinor: int64(t.DailyCap) * 100,
			StartingCashMinor: int64(t.StartingCash) * 100},
		Alpaca: &trading.AlpacaClient{Client: client, BaseURL: t.AlpacaURL, DataURL: t.AlpacaDataURL, MaxWait: 2 * time.Second}}
}

// tradingTools are the trading tools when trading is on, else none.
func tradingTools(t *trading.Service) []tools.Tool {
	if !t.On() {
		return nil
	}
	return tradingtools.Tools(t, t.Config.Mode == trading.Alpaca)
}

// outside is what the jobs gather from: the owner's mail and calendar, and — trading on —
// the portfolio line of the morning briefing (autonomy.Portfolio).
type outside struct {
	*accounts.Service
	trading *trading.Service
}

// PortfolioLine is the trading service's, "" when trading is off.
func (o outside) PortfolioLine(ctx context.Context, ownerID uuid.UUID) (string, error) {
	return o.trading.PortfolioLine(ctx, ownerID)
}
