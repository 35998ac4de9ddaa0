package trading

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// The Alpaca base URLs (docs/TRADING.md).
const (
	AlpacaPaperURL = "https://paper-api.alpaca.markets"
	AlpacaLiveURL  = "https://api.alpaca.markets"
	AlpacaDataURL  = "https://data.alpaca.markets"
)

// AlpacaClient speaks Alpaca's Trading API v2 (and its market data API for quotes) through
// the egress guard's client, whose timeout bounds every call (§8).
type AlpacaClient struct {
	Client  *http.Client
	BaseURL string
	// DataURL is the market data API; empty: quotes come from the owner's price table.
	DataURL string
	// MaxWait bounds how long a 429's Retry-After is waited for (two tries more at most).
	MaxWait time.Duration
}

// Keys are an owner's Alpaca API keys (sealed when stored).
type Keys struct {
	KeyID  string `json:"key_id"`
	Secret string `json:"secret"`
}

// Kind is "paper" or "live", from the base URL.
func (a *AlpacaClient) Kind() string {
	if strings.Contains(a.BaseURL, "paper") {
		return "paper"
	}
	return "live"
}

// apiError is an answer of Alpaca's other than success, in words.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("Alpaca answered %d: %s", e.Status, e.Message)
}

// errNoAnswer is a call that was sent and got no answer (a timeout, a dropped connection).
var errNoAnswer = errors.New("no answer from Alpaca")

// alpacaOrder is an order as Alpaca words it.
type alpacaOrder struct {
	ID             string `json:"id"`
	ClientOrderID  string `json:"client_order_id"`
	Status         string `json:"status"`
	Symbol         string `json:"symbol"`
	Qty            string `json:"qty,omitempty"`
	Notional       string `json:"notional,omitempty"`
	FilledQty      string `json:"filled_qty,omitempty"`
	FilledAvgPrice string `json:"filled_avg_price,omitempty"`
	Side           string `json:"side"`
	Type           string `json:"type"`
	TimeInForce    string `json:"time_in_force"`
	LimitPrice     string `json:"limit_price,omitempty"`
}

// do sends one call and decodes a success into out. A 429 is tried again after its
// Retry-After (at most MaxWait, twice); a call that got no answer is errNoAnswer.
func (a *AlpacaClient) do(ctx context.Context, keys Keys, method, base, path string, body, out any) error {
	for try := 0; ; try++ {
		err := a.once(ctx, keys, method, base+path, body, out)
		var wait rateLimited
		if !errors.As(err, &wait) || try == 2 {
			if errors.As(err, &wait) {
				return &apiError{Status: http.StatusTooManyRequests, Message: "too many requests; the order was not accepted, try again later"}
			}
			return err
		}
		t := time.NewTimer(min(time.Duration(wait), a.MaxWait))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// rateLimited is a 429 with its Retry-After.
type rateLimited time.Duration

func (rateLimited) Error() string { return "rate limited" }

func (a *AlpacaClient) once(ctx context.Context, keys Keys, method, u string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return err
	}
	req.Header.Set("APCA-API-KEY-ID", keys.KeyID)
	req.Header.Set("APCA-API-SECRET-KEY", keys.Secret)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", errNoAnswer, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: %v", errNoAnswer, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return rateLimited(time.Duration(max(secs, 1)) * time.Second)
	case resp.StatusCode >= 300:
		var m struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(data, &m)
		if m.Message == "" {
			m.Message = http.StatusText(resp.StatusCode)
		}
		return &apiError{Status: resp.StatusCode, Message: steward.Visible(cut(m.Message, 300))}
	case out == nil:
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("the answer is not what Alpaca's API says: %w", err)
	}
	return nil
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Quote reads a symbol's latest trade from the market data API.
func (a *AlpacaClient) Quote(ctx context.Context, keys Keys, symbol string) (Quote, error) {
	var out struct {
		Trade struct {
			Price float64   `json:"p"`
			At    time.Time `json:"t"`
		} `json:"trade"`
	}
	err := a.do(ctx, keys, http.MethodGet, a.DataURL, "/v2/stocks/"+url.PathEscape(symbol)+"/trades/latest", nil, &out)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound || err == nil && out.Trade.Price <= 0 {
		return Quote{}, refused("no quote for %s from Alpaca, so no order", symbol)
	}
	if err != nil {
		return Quote{}, steward.Errorf(steward.CodeUnavailable, "no quote for %s, so no order: %v", symbol, err)
	}
	cents, err := centsOf("price", out.Trade.Price)
	if err != nil {
		return Quote{}, invalid("no usable quote for %s from Alpaca, so no order", symbol)
	}
	return Quote{Symbol: symbol, PriceMinor: cents, Price: Money(cents), Source: "Alpaca market data", At: out.Trade.At}, nil
}

// keys opens the owner's sealed Alpaca keys.
func (s *Service) keys(ctx context.Context, ownerID uuid.UUID) (Keys, error) {
	var sealed []byte
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		acct, err := tx.Trading.Account(ctx, s.Config.StartingCashMinor, false)
		sealed = acct.Keys
		return err
	})
	if err != nil {
		return Keys{}, err
	}
	if sealed == nil {
		return Keys{}, invalid("no Alpaca keys: set them with `steward trading keys` first")
	}
	plain, err := s.Sealer.Open(sealed, ownerID[:])
	if err != nil {
		return Keys{}, fmt.Errorf("open Alpaca keys: %w", err)
	}
	var k Keys
	return k, json.Unmarshal(plain, &k)
}

// SetKeys stores the owner's Alpaca keys, sealed with STEWARD_SECRET_KEY (the owner's id
// bound in); they are never shown again.
func (s *Service) SetKeys(ctx context.Context, ownerID uuid.UUID, k Keys) error {
	if err := s.on(); err != nil {
		return err
	}
	k.KeyID, k.Secret = strings.TrimSpace(k.KeyID), strings.TrimSpace(k.Secret)
	for _, v := range []string{k.KeyID, k.Secret} {
		if v == "" || len(v) > 200 || strings.ContainsAny(v, " \r\n\x00") {
			return invalid("an Alpaca key id and secret are each one word of at most 200 characters")
		}
	}
	plain, _ := json.Marshal(k)
	sealed, err := s.Sealer.Seal(plain, ownerID[:])
	if errors.Is(err, secret.ErrNoKey) {
		return invalid("STEWARD_SECRET_KEY is not set, so no keys can be stored")
	}
	if err != nil {
		return err
	}
	return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if _, err := tx.Trading.Account(ctx, s.Config.StartingCashMinor, true); err != nil {
			return err
		}
		return tx.Trading.SetKeys(ctx, sealed)
	})
}

// send places a recorded order at Alpaca with its client_order_id. An order recorded before
// (a retried call) is looked up by that id first and placed only when Alpaca has none; an
// order sent without an answer is recorded unknown (steward.ErrOutcomeUnknown).
func (s *Service) send(ctx context.Context, ownerID uuid.UUID, o steward.Order, fresh bool) (steward.Order, error) {
	if !fresh && o.Status != "sending" && o.Status != "unknown" {
		return o, nil
	}
	keys, err := s.keys(ctx, ownerID)
	if err != nil {
		return s.record(ctx, ownerID, o, steward.OrderUpdate{Status: "rejected", Reason: err.Error()}, err)
	}
	if !fresh {
		found, err := s.lookup(ctx, keys, o.ClientOrderID)
		switch {
		case err == nil:
			return s.record(ctx, ownerID, o, found, nil)
		case !errors.Is(err, store.ErrNotFound):
			return o, fmt.Errorf("look up order %s at Alpaca: %w", o.ClientOrderID, err)
		}
	}
	body := map[string]any{"symbol": o.Symbol, "side": o.Side, "type": o.Type, "time_in_force": o.TimeInForce, "client_order_id": o.ClientOrderID}
	if o.Qty != nil {
		body["qty"] = strconv.FormatInt(*o.Qty, 10)
	} else {
		body["notional"] = dollars(*o.NotionalMinor)
	}
	if o.LimitPriceMinor != nil {
		body["limit_price"] = dollars(*o.LimitPriceMinor)
	}
	var placed alpacaOrder
	err = s.Alpaca.do(ctx, keys, http.MethodPost, s.Alpaca.BaseURL, "/v2/orders", body, &placed)
	var ae *apiError
	switch {
	case err == nil:
		return s.record(ctx, ownerID, o, update(placed), nil)
	case errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity && strings.Contains(ae.Message, "client_order_id"):
		// Placed before under this id: look it up rather than place another.
		found, lerr := s.lookup(ctx, keys, o.ClientOrderID)
		if lerr != nil {
			return o, fmt.Errorf("look up order %s at Alpaca: %w", o.ClientOrderID, lerr)
		}
		return s.record(ctx, ownerID, o, found, nil)
	case errors.As(err, &ae):
		return s.record(ctx, ownerID, o, steward.OrderUpdate{Status: "rejected", Reason: ae.Error()}, nil)
	case errors.Is(err, errNoAnswer):
		u := steward.OrderUpdate{Status: "unknown", Reason: "sent to Alpaca without an answer in time: it may or may not have been placed; it is never sent again"}
		return s.record(ctx, ownerID, o, u, fmt.Errorf("order %s: %w: %v", o.ClientOrderID, steward.ErrOutcomeUnknown, err))
	default:
		return o, err
	}
}

// record stores what Alpaca said of o (in a transaction of its own, whatever ctx says: the
// answer must not be lost) and returns the order with err.
func (s *Service) record(ctx context.Context, ownerID uuid.UUID, o steward.Order, u steward.OrderUpdate, err error) (steward.Order, error) {
	if u.At.IsZero() {
		u.At = s.Now.Now()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	werr := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var e error
		o, e = tx.TradeOrders.UpdateOrder(ctx, o.ID, u)
		return e
	})
	return o, errors.Join(err, werr)
}

// lookup reads an order at Alpaca by its client_order_id; none is store.ErrNotFound.
func (s *Service) lookup(ctx context.Context, keys Keys, clientID string) (steward.OrderUpdate, error) {
	var found alpacaOrder
	err := s.Alpaca.do(ctx, keys, http.MethodGet, s.Alpaca.BaseURL, "/v2/orders:by_client_order_id?client_order_id="+url.QueryEscape(clientID), nil, &found)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return steward.OrderUpdate{}, store.ErrNotFound
	}
	if err != nil {
		return steward.OrderUpdate{}, err
	}
	return update(found), nil
}

// refresh looks up the orders whose outcome was not known (at most five) and reports
// whether any changed.
func (s *Service) refresh(ctx context.Context, ownerID uuid.UUID, orders []steward.Order) bool {
	changed, tried := false, 0
	for _, o := range orders {
		if o.Broker != Alpaca || (o.Status != "sending" && o.Status != "unknown") || tried == 5 {
			continue
		}
		tried++
		keys, err := s.keys(ctx, ownerID)
		if err != nil {
			return changed
		}
		if u, err := s.lookup(ctx, keys, o.ClientOrderID); err == nil {
			_, err = s.record(ctx, ownerID, o, u, nil)
			changed = changed || err == nil
		}
	}
	return changed
}

// cancelAlpaca asks Alpaca to cancel an open order and records what it says then.
func (s *Service) cancelAlpaca(ctx context.Context, ownerID uuid.UUID, o steward.Order) (steward.Order, error) {
	keys, err := s.keys(ctx, ownerID)
	if err != nil {
		return o, err
	}
	if o.BrokerOrderID == "" {
		return o, steward.Errorf(steward.CodeConflict, "order %s has no Alpaca id yet; list_orders looks it up", o.ID)
	}
	err = s.Alpaca.do(ctx, keys, http.MethodDelete, s.Alpaca.BaseURL, "/v2/orders/"+url.PathEscape(o.BrokerOrderID), nil, nil)
	var ae *apiError
	if errors.As(err, &ae) {
		return o, steward.Errorf(steward.CodeConflict, "Alpaca did not cancel order %s: %s", o.ID, ae.Message)
	}
	if err != nil {
		return o, err
	}
	u, err := s.lookup(ctx, keys, o.ClientOrderID)
	if err != nil {
		u = steward.OrderUpdate{Status: "canceled", BrokerOrderID: o.BrokerOrderID}
	}
	return s.record(ctx, ownerID, o, u, nil)
}

// update is what an Alpaca order says, in Steward's statuses.
func update(a alpacaOrder) steward.OrderUpdate {
	u := steward.OrderUpdate{BrokerOrderID: a.ID, Status: "accepted"}
	switch a.Status {
	case "new", "accepted", "partially_filled", "filled", "canceled", "rejected", "expired":
		u.Status = a.Status
	case "pending_new", "accepted_for_bidding":
		u.Status = "new"
	case "done_for_day":
		u.Status = "expired"
	}
	if q, err := strconv.ParseFloat(a.FilledQty, 64); err == nil && q > 0 {
		u.FilledQty = int64(q)
	}
	if p, err := dollarsOf(a.FilledAvgPrice); err == nil && p > 0 {
		u.FilledPriceMinor = &p
	}
	return u
}

// dollars words cents as Alpaca's decimal string.
func dollars(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

// alpacaPortfolio reads the Alpaca account and positions.
func (s *Service) alpacaPortfolio(ctx context.Context, ownerID uuid.UUID) (Account, []Holding, error) {
	keys, err := s.keys(ctx, ownerID)
	if err != nil {
		return Account{}, nil, err
	}
	var acct struct {
		Cash        string `json:"cash"`
		Equity      string `json:"equity"`
		BuyingPower string `json:"buying_power"`
		Currency    string `json:"currency"`
	}
	if err := s.Alpaca.do(ctx, keys, http.MethodGet, s.Alpaca.BaseURL, "/v2/account", nil, &acct); err != nil {
		return Account{}, nil, steward.Errorf(steward.CodeUnavailable, "could not read the Alpaca account: %v", err)
	}
	var ps []struct {
		Symbol        string `json:"symbol"`
		Qty           string `json:"qty"`
		CostBasis     string `json:"cost_basis"`
		CurrentPrice  string `json:"current_price"`
		MarketValue   string `json:"market_value"`
		UnrealizedPnL string `json:"unrealized_pl"`
	}
	if err := s.Alpaca.do(ctx, keys, http.MethodGet, s.Alpaca.BaseURL, "/v2/positions", nil, &ps); err != nil {
		return Account{}, nil, steward.Errorf(steward.CodeUnavailable, "could not read the Alpaca positions: %v", err)
	}
	a := Account{Broker: Alpaca + " (" + s.Alpaca.Kind() + ")", Currency: acct.Currency}
	a.CashMinor, _ = dollarsOf(acct.Cash)
	a.EquityMinor, _ = dollarsOf(acct.Equity)
	a.BuyingPowerMinor, _ = dollarsOf(acct.BuyingPower)
	hs := make([]Holding, 0, len(ps))
	for _, p := range ps {
		q, _ := strconv.ParseFloat(p.Qty, 64)
		h := Holding{Symbol: p.Symbol, Qty: int64(q)}
		h.CostMinor, _ = dollarsOf(p.CostBasis)
		h.ValueMinor, _ = dollarsOf(p.MarketValue)
		h.PnLMinor, _ = dollarsOf(p.UnrealizedPnL)
		if price, err := dollarsOf(p.CurrentPrice); err == nil && price > 0 {
			h.PriceMinor = &price
		}
		a.PositionsValueMinor += h.ValueMinor
		a.PnLMinor += h.PnLMinor
		hs = append(hs, h)
	}
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		acctRow, err := tx.Trading.Account(ctx, s.Config.StartingCashMinor, false)
		if err != nil {
			return err
		}
		a.Caps, err = s.caps(ctx, tx, acctRow.Settings)
		return err
	})
	return a, hs, err
}
