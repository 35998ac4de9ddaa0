-- Trading, paper first (docs/TRADING.md, docs/ARCHITECTURE.md §20). Per owner, under forced
-- row-level security, no door: trading_accounts holds the paper broker's cash, the owner's
-- own caps (which only tighten the deployment's), the optional symbol allow-list, the paper
-- commission and the owner's Alpaca keys sealed with STEWARD_SECRET_KEY (internal/secret, the
-- owner's id bound in). trading_prices is the owner's price table (the paper broker's quotes);
-- trading_positions the paper broker's holdings; trading_orders every order Steward placed,
-- with either broker, keyed per owner by client_order_id — the journaled call id — so one
-- call is one order (the broker's idempotency key), and the day's notional is read from it
-- for the daily cap. Money is in integer cents (USD); quantities are whole shares.

-- +goose Up
CREATE TABLE trading_accounts (
    owner_id          uuid PRIMARY KEY REFERENCES owners (id) ON DELETE CASCADE,
    cash_minor        bigint NOT NULL CHECK (cash_minor >= 0),
    order_cap_minor   bigint CHECK (order_cap_minor >= 0),
    daily_cap_minor   bigint CHECK (daily_cap_minor >= 0),
    symbols           text[] CHECK (cardinality(symbols) <= 200),
    commission_minor  bigint NOT NULL DEFAULT 0 CHECK (commission_minor BETWEEN 0 AND 100000),
    alpaca_keys       bytea CHECK (length(alpaca_keys) BETWEEN 1 AND 4096),
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE trading_prices (
    owner_id     uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    symbol       text NOT NULL CHECK (symbol ~ '^[A-Z][A-Z0-9.]{0,9}$'),
    price_minor  bigint NOT NULL CHECK (price_minor > 0),
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (owner_id, symbol)
);

CREATE TABLE trading_positions (
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    symbol      text NOT NULL CHECK (symbol ~ '^[A-Z][A-Z0-9.]{0,9}$'),
    qty         bigint NOT NULL CHECK (qty > 0),
    cost_minor  bigint NOT NULL CHECK (cost_minor >= 0),
    PRIMARY KEY (owner_id, symbol)
);

CREATE TABLE trading_orders (
    owner_id            uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    id                  uuid NOT NULL DEFAULT gen_random_uuid(),
    client_order_id     text NOT NULL CHECK (length(client_order_id) BETWEEN 1 AND 128),
    broker              text NOT NULL CHECK (broker IN ('paper', 'alpaca')),
    broker_order_id     text CHECK (length(broker_order_id) <= 128),
    symbol              text NOT NULL CHECK (symbol ~ '^[A-Z][A-Z0-9.]{0,9}$'),
    side                text NOT NULL CHECK (side IN ('buy', 'sell')),
    qty                 bigint CHECK (qty > 0),
    notional_minor      bigint CHECK (notional_minor > 0),
    type                text NOT NULL CHECK (type IN ('market', 'limit')),
    limit_price_minor   bigint CHECK (limit_price_minor > 0),
    time_in_force       text NOT NULL CHECK (time_in_force IN ('day', 'gtc')),
    status              text NOT NULL CHECK (status IN ('sending', 'new', 'accepted', 'partially_filled', 'filled',
                                                       'canceled', 'rejected', 'expired', 'unknown')),
    estimate_minor      bigint NOT NULL CHECK (estimate_minor >= 0),
    filled_qty          bigint NOT NULL DEFAULT 0 CHECK (filled_qty >= 0),
    filled_price_minor  bigint CHECK (filled_price_minor > 0),
    commission_minor    bigint NOT NULL DEFAULT 0 CHECK (commission_minor >= 0),
    reason              text CHECK (length(reason) <= 500),
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    PRIMARY KEY (owner_id, id),
    UNIQUE (owner_id, client_order_id),
    CHECK ((qty IS NULL) <> (notional_minor IS NULL))
);
CREATE INDEX trading_orders_owner_created ON trading_orders (owner_id, created_at DESC);

ALTER TABLE trading_accounts ENABLE ROW LEVEL SECURITY;
ALTER TABLE trading_accounts FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON trading_accounts
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
ALTER TABLE trading_prices ENABLE ROW LEVEL SECURITY;
ALTER TABLE trading_prices FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON trading_prices
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
ALTER TABLE trading_positions ENABLE ROW LEVEL SECURITY;
ALTER TABLE trading_positions FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON trading_positions
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
ALTER TABLE trading_orders ENABLE ROW LEVEL SECURITY;
ALTER TABLE trading_orders FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON trading_orders
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE ON trading_accounts TO steward_app;
GRANT SELECT, INSERT, UPDATE ON trading_prices TO steward_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON trading_positions TO steward_app;
GRANT SELECT, INSERT, UPDATE ON trading_orders TO steward_app;

-- +goose Down
DROP TABLE trading_orders;
DROP TABLE trading_positions;
DROP TABLE trading_prices;
DROP TABLE trading_accounts;
