package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/trading"
)

const tradingUsage = `Usage:
  steward trading price SYMBOL DOLLARS [--owner ID]   set a price in the paper broker's price table
  steward trading prices [--owner ID]                 the price table
  steward trading account [--owner ID]                cash, equity, P&L and the caps left today
  steward trading positions [--owner ID]              the positions at their quotes
  steward trading orders [--limit N] [--owner ID]     the newest orders and their status
  steward trading caps [--order DOLLARS] [--daily DOLLARS] [--symbols A,B] [--commission DOLLARS] [--owner ID]
                                                      the owner's own caps (only ever below the deployment's)
  steward trading keys --key-id ID [--owner ID]       store the owner's Alpaca keys (the secret read from stdin)

Trading is off unless STEWARD_TRADING=paper or alpaca (docs/TRADING.md). Not investment advice;
live trading is at the owner's own risk.
`

func runTrading(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, tradingUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"price":     tradingPrice,
		"prices":    tradingPrices,
		"account":   tradingAccount,
		"positions": tradingPositions,
		"orders":    tradingOrders,
		"caps":      tradingCaps,
		"keys":      tradingKeys,
	})
}

// withTrading runs fn with the owner's brokerage, or says trading is off.
func withTrading(ctx context.Context, cfg config.Config, owner *uuidFlag, fn func(t *trading.Service, owner uuid.UUID) error) error {
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		if !a.Trading.On() {
			return errors.New("trading is off: set STEWARD_TRADING=paper (or alpaca) first (docs/TRADING.md)")
		}
		return fn(a.Trading, owners[0])
	})
}

func tradingPrice(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("trading price", flag.ContinueOnError)
	owner := ownerFlag(fs)
	pos, err := parseFlags(fs, args, tradingUsage, 2, 2)
	if err != nil {
		return err
	}
	return withTrading(ctx, cfg, owner, func(t *trading.Service, o uuid.UUID) error {
		p, err := t.SetPrice(ctx, o, pos[0], pos[1])
		if err != nil {
			return fmt.Errorf("trading price: %w", err)
		}
		fmt.Fprintf(e.stdout, "%s is %s in your price table.\n", p.Symbol, trading.Money(p.PriceMinor))
		return nil
	})
}

func tradingPrices(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("trading prices", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, tradingUsage, 0, 0); err != nil {
		return err
	}
	return withTrading(ctx, cfg, owner, func(t *trading.Service, o uuid.UUID) error {
		ps, err := t.Prices(ctx, o)
		if err != nil {
			return fmt.Errorf("trading prices: %w", err)
		}
		if len(ps) == 0 {
			fmt.Fprintln(e.stdout, "No prices yet: steward trading price AAPL 187.20")
		}
		for _, p := range ps {
			fmt.Fprintf(e.stdout, "%-8s %14s  set %s\n", p.Symbol, trading.Money(p.PriceMinor), p.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC"))
		}
		return nil
	})
}

func tradingAccount(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("trading account", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, tradingUsage, 0, 0); err != nil {
		return err
	}
	return withTrading(ctx, cfg, owner, func(t *trading.Service, o uuid.UUID) error {
		a, err := t.Account(ctx, o)
		if err != nil {
			return fmt.Errorf("trading account: %w", err)
		}
		fmt.Fprintf(e.stdout, "Account:        %s\nCash:           %s\nPositions:      %s\nEquity:         %s\nBuying power:   %s\nUnrealised P&L: %s\n%s\n",
			a.Broker, trading.Money(a.CashMinor), trading.Money(a.PositionsValueMinor), trading.Money(a.EquityMinor),
			trading.Money(a.BuyingPowerMinor), trading.Money(a.PnLMinor), trading.CapsWords(a.Caps))
		if len(a.Unpriced) > 0 {
			fmt.Fprintf(e.stdout, "No price for %s: valued at cost.\n", strings.Join(a.Unpriced, ", "))
		}
		return nil
	})
}

func tradingPositions(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("trading positions", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, tradingUsage, 0, 0); err != nil {
		return err
	}
	return withTrading(ctx, cfg, owner, func(t *trading.Service, o uuid.UUID) error {
		hs, err := t.Positions(ctx, o)
		if err != nil {
			return fmt.Errorf("trading positions: %w", err)
		}
		if len(hs) == 0 {
			fmt.Fprintln(e.stdout, "No positions.")
		}
		for _, h := range hs {
			price := "no price"
			if h.PriceMinor != nil {
				price = trading.Money(*h.PriceMinor)
			}
			fmt.Fprintf(e.stdout, "%-8s %8d shares  at %-14s value %-16s cost %-16s P&L %s\n", h.Symbol, h.Qty, price,
				trading.Money(h.ValueMinor), trading.Money(h.CostMinor), trading.Money(h.PnLMinor))
		}
		return nil
	})
}

// OrderLine words an order on one line.
func orderLine(o steward.Order) string {
	what := o.Symbol
	if o.Qty != nil {
		what = fmt.Sprintf("%d %s", *o.Qty, o.Symbol)
	} else if o.NotionalMinor != nil {
		what = trading.Money(*o.NotionalMinor) + " of " + o.Symbol
	}
	s := fmt.Sprintf("%s  %-4s %-16s %-7s %-10s", o.CreatedAt.UTC().Format("2006-01-02 15:04"), o.Side, what, o.Type, o.Status)
	if o.FilledPriceMinor != nil {
		s += fmt.Sprintf(" %d at %s", o.FilledQty, trading.Money(*o.FilledPriceMinor))
	}
	if o.Reason != "" {
		s += " (" + o.Reason + ")"
	}
	return s + "  " + o.ID
}

func tradingOrders(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("trading orders", flag.ContinueOnError)
	owner := ownerFlag(fs)
	limit := fs.Int("limit", 20, "the most orders to list")
	if _, err := parseFlags(fs, args, tradingUsage, 0, 0); err != nil {
		return err
	}
	if *limit < 1 || *limit > 500 {
		return usageError{msg: "--limit is from 1 to 500", usage: tradingUsage}
	}
	return withTrading(ctx, cfg, owner, func(t *trading.Service, o uuid.UUID) error {
		os, err := t.Orders(ctx, o, *limit)
		if err != nil {
			return fmt.Errorf("trading orders: %w", err)
		}
		if len(os) == 0 {
			fmt.Fprintln(e.stdout, "No orders.")
		}
		for _, o := range os {
			fmt.Fprintln(e.stdout, orderLine(o))
		}
		return nil
	})
}

func tradingCaps(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("trading caps", flag.ContinueOnError)
	owner := ownerFlag(fs)
	order := fs.String("order", "", "the owner's per-order cap in dollars (none: the deployment's)")
	daily := fs.String("daily", "", "the owner's daily cap in dollars")
	symbols := fs.String("symbols", "", "the only symbols orders may name, comma-separated (none: any)")
	commission := fs.String("commission", "", "the paper broker's commission per order in dollars")
	if _, err := parseFlags(fs, args, tradingUsage, 0, 0); err != nil {
		return err
	}
	var set steward.TradingSettings
	for _, c := range []struct {
		flag string
		into **int64
	}{{*order, &set.OrderCapMinor}, {*daily, &set.DailyCapMinor}} {
		if c.flag == "" {
			continue
		}
		v, err := trading.ParseDollars(c.flag)
		if err != nil {
			return fmt.Errorf("trading caps: %w", err)
		}
		*c.into = &v
	}
	if *commission != "" && *commission != "0" {
		v, err := trading.ParseDollars(*commission)
		if err != nil {
			return fmt.Errorf("trading caps: %w", err)
		}
		set.CommissionMinor = v
	}
	for _, s := range strings.Split(*symbols, ",") {
		if s = strings.TrimSpace(s); s != "" {
			set.Symbols = append(set.Symbols, s)
		}
	}
	return withTrading(ctx, cfg, owner, func(t *trading.Service, o uuid.UUID) error {
		if err := t.SetSettings(ctx, o, set); err != nil {
			return fmt.Errorf("trading caps: %w", err)
		}
		_, c, err := t.Settings(ctx, o)
		if err != nil {
			return fmt.Errorf("trading caps: %w", err)
		}
		fmt.Fprintln(e.stdout, trading.CapsWords(c))
		return nil
	})
}

func tradingKeys(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("trading keys", flag.ContinueOnError)
	owner := ownerFlag(fs)
	keyID := fs.String("key-id", "", "the Alpaca API key id")
	if _, err := parseFlags(fs, args, tradingUsage, 0, 0); err != nil {
		return err
	}
	secret := password(e, "-")
	return withTrading(ctx, cfg, owner, func(t *trading.Service, o uuid.UUID) error {
		if err := t.SetKeys(ctx, o, trading.Keys{KeyID: *keyID, Secret: secret}); err != nil {
			return fmt.Errorf("trading keys: %w", err)
		}
		fmt.Fprintln(e.stdout, "Alpaca keys stored, sealed; they are never shown again.")
		return nil
	})
}
