-- Safety backbone: kill switches, money caps with a durable spending ledger, daily budgets.

-- +goose Up
-- Per-owner kill switch and budgets. The owner may stop (and resume) their own Steward.
ALTER TABLE owners
    ADD COLUMN killed_at         timestamptz,
    ADD COLUMN kill_reason       text NOT NULL DEFAULT '',
    ADD COLUMN daily_messages    integer NOT NULL DEFAULT 500 CHECK (daily_messages >= 0),
    ADD COLUMN daily_cost_micros bigint NOT NULL DEFAULT 5000000 CHECK (daily_cost_micros >= 0);
GRANT UPDATE (killed_at, kill_reason) ON owners TO steward_app;

-- Deployment-wide controls: one row. The operator (steward_owner) changes it; the app reads.
CREATE TABLE controls (
    id                    boolean PRIMARY KEY DEFAULT true CHECK (id),
    killed_at             timestamptz,
    kill_reason           text NOT NULL DEFAULT '',
    daily_cost_cap_micros bigint NOT NULL DEFAULT 50000000 CHECK (daily_cost_cap_micros >= 0)
);
INSERT INTO controls DEFAULT VALUES;
GRANT SELECT ON controls TO steward_app;

-- Hard money caps per owner and currency, checked before rules and before a human is asked.
CREATE TABLE spending_caps (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id         uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    currency         text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    per_action_minor bigint NOT NULL CHECK (per_action_minor >= 0),
    window_minor     bigint NOT NULL CHECK (window_minor >= 0),
    window_seconds   integer NOT NULL DEFAULT 86400 CHECK (window_seconds > 0),
    created_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner_id, currency)
);

-- The durable ledger of money moved by executed writes: the rolling window survives restarts.
CREATE TABLE spend_ledger (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id     uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    turn_id      uuid,
    call_id      text NOT NULL DEFAULT '',
    tool         text NOT NULL,
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    currency     text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX spend_ledger_owner_window ON spend_ledger (owner_id, currency, created_at);

-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['spending_caps', 'spend_ledger']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY owner_isolation ON %I
            USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
            WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)$p$, t);
    END LOOP;
END
$$;
-- +goose StatementEnd
GRANT SELECT, INSERT, UPDATE, DELETE ON spending_caps TO steward_app;
GRANT SELECT, INSERT ON spend_ledger TO steward_app;

-- The deployment's daily cost cap sums every owner's turns: a reviewed directory read.
CREATE POLICY directory ON turns FOR SELECT TO steward_owner USING (true);
CREATE INDEX turns_created ON turns (created_at);

-- +goose Down
DROP INDEX turns_created;
DROP POLICY directory ON turns;
DROP TABLE spend_ledger, spending_caps, controls;
ALTER TABLE owners DROP COLUMN killed_at, DROP COLUMN kill_reason, DROP COLUMN daily_messages,
    DROP COLUMN daily_cost_micros;
