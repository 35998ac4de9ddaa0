package config

import (
	"strings"
	"time"
)

// Trading is the brokerage's settings (docs/TRADING.md, docs/ARCHITECTURE.md §20).
type Trading struct {
	// Mode is off (the default: no trading tool is registered), paper or alpaca
	// (STEWARD_TRADING).
	Mode string
	// OrderCap and DailyCap are the notional caps in whole dollars (STEWARD_TRADING_ORDER_CAP,
	// 1000; STEWARD_TRADING_DAILY_CAP, 5000); an owner's own may only be lower.
	OrderCap, DailyCap int
	// StartingCash is a new paper account's cash in dollars (STEWARD_TRADING_PAPER_CASH, 100000).
	StartingCash int
	// AlpacaURL is the Trading API's base URL (STEWARD_ALPACA_URL, Alpaca's paper API by
	// default; https://api.alpaca.markets is live). AlpacaDataURL is the market data API
	// quotes come from (STEWARD_ALPACA_DATA_URL; unset: the owner's price table).
	AlpacaURL, AlpacaDataURL string
	// Timeout bounds each call to Alpaca (STEWARD_ALPACA_TIMEOUT, 10s).
	Timeout time.Duration
}

// trading reads the Trading area.
func (r *reader) trading() Trading {
	t := Trading{
		Mode:          r.oneOf("STEWARD_TRADING", "off", "off", "paper", "alpaca"),
		OrderCap:      r.intIn("STEWARD_TRADING_ORDER_CAP", 1000, 0, 10_000_000),
		DailyCap:      r.intIn("STEWARD_TRADING_DAILY_CAP", 5000, 0, 10_000_000),
		StartingCash:  r.intIn("STEWARD_TRADING_PAPER_CASH", 100_000, 0, 10_000_000),
		AlpacaURL:     strings.TrimRight(r.str("STEWARD_ALPACA_URL", "https://paper-api.alpaca.markets"), "/"),
		AlpacaDataURL: strings.TrimRight(r.str("STEWARD_ALPACA_DATA_URL", ""), "/"),
		Timeout:       r.duration("STEWARD_ALPACA_TIMEOUT", 10*time.Second),
	}
	r.httpURL("STEWARD_ALPACA_URL", t.AlpacaURL)
	r.httpURL("STEWARD_ALPACA_DATA_URL", t.AlpacaDataURL)
	return t
}
