-- The ledger (issue 13): a per-owner double-entry book. Accounts have a kind and a currency;
-- a transaction has two or more postings whose signed amounts, in integer minor units, sum
-- to exactly zero per currency. The database refuses anything else (a deferred constraint
-- trigger, checked at commit), so no code path, not even raw SQL as steward_app, can leave
-- the book unbalanced. Budgets are a monthly amount per category (an expense account name).

-- +goose Up
CREATE TABLE ledger_accounts (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    kind       text NOT NULL CHECK (kind IN ('asset', 'liability', 'income', 'expense', 'equity')),
    currency   text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner_id, name),
    UNIQUE (owner_id, id)
);

CREATE TABLE ledger_transactions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    date        date NOT NULL,
    description text NOT NULL CHECK (length(description) <= 1000),
    merchant    text NOT NULL DEFAULT '' CHECK (length(merchant) <= 200),
    source      text NOT NULL CHECK (source IN ('import', 'manual', 'seed')),
    -- import_hash makes re-importing a statement a no-op: a stable hash of the row and its
    -- account, with a counter for genuinely identical rows on one day.
    import_hash text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner_id, id)
);
CREATE UNIQUE INDEX ledger_transactions_import ON ledger_transactions (owner_id, import_hash)
    WHERE import_hash IS NOT NULL;
CREATE INDEX ledger_transactions_date ON ledger_transactions (owner_id, date);

CREATE TABLE ledger_postings (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id       uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    transaction_id uuid NOT NULL,
    account_id     uuid NOT NULL,
    amount_minor   bigint NOT NULL CHECK (amount_minor <> 0),
    currency       text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    FOREIGN KEY (owner_id, transaction_id) REFERENCES ledger_transactions (owner_id, id) ON DELETE CASCADE,
    FOREIGN KEY (owner_id, account_id) REFERENCES ledger_accounts (owner_id, id)
);
CREATE INDEX ledger_postings_transaction ON ledger_postings (transaction_id);
CREATE INDEX ledger_postings_account ON ledger_postings (owner_id, account_id);

CREATE TABLE ledger_budgets (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id       uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    category       text NOT NULL CHECK (length(category) BETWEEN 1 AND 100),
    monthly_minor  bigint NOT NULL CHECK (monthly_minor >= 0),
    currency       text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner_id, category)
);

-- +goose StatementBegin
-- ledger_check_balance refuses, at commit, a transaction with fewer than two postings, a
-- posting in another currency than its account, or postings that do not sum to zero in
-- each currency. It runs as the caller, so row-level security still applies to what it reads.
CREATE FUNCTION ledger_check_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    txid uuid;
    n    integer;
BEGIN
    IF TG_TABLE_NAME = 'ledger_transactions' THEN
        txid := NEW.id;
    ELSIF TG_OP = 'DELETE' THEN
        txid := OLD.transaction_id;
    ELSE
        txid := NEW.transaction_id;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ledger_transactions WHERE id = txid) THEN
        RETURN NULL; -- the transaction itself was deleted, with all its postings
    END IF;
    SELECT count(*) INTO n FROM ledger_postings WHERE transaction_id = txid;
    IF n < 2 THEN
        RAISE EXCEPTION 'ledger transaction % has % posting(s); a transaction needs at least two', txid, n
            USING ERRCODE = '23514';
    END IF;
    IF EXISTS (SELECT 1 FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.account_id
               WHERE p.transaction_id = txid AND p.currency <> a.currency) THEN
        RAISE EXCEPTION 'ledger transaction % posts to an account in another currency', txid
            USING ERRCODE = '23514';
    END IF;
    IF EXISTS (SELECT 1 FROM ledger_postings WHERE transaction_id = txid
               GROUP BY currency HAVING sum(amount_minor) <> 0) THEN
        RAISE EXCEPTION 'ledger transaction % does not balance: its postings must sum to zero', txid
            USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE CONSTRAINT TRIGGER ledger_postings_balance
    AFTER INSERT OR UPDATE OR DELETE ON ledger_postings
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balance();
CREATE CONSTRAINT TRIGGER ledger_transactions_balance
    AFTER INSERT ON ledger_transactions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balance();

-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['ledger_accounts', 'ledger_transactions', 'ledger_postings', 'ledger_budgets']
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
GRANT SELECT, INSERT ON ledger_accounts TO steward_app;
GRANT SELECT, INSERT, DELETE ON ledger_transactions TO steward_app;
GRANT SELECT, INSERT, UPDATE (account_id) ON ledger_postings TO steward_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ledger_budgets TO steward_app;

-- +goose Down
DROP TABLE ledger_budgets, ledger_postings, ledger_transactions, ledger_accounts;
DROP FUNCTION ledger_check_balance();
