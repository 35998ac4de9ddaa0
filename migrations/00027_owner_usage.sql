-- Each owner's daily budget use as a counter (issue 14). Admitting a turn read the owner's
-- messages and cost of the day by scanning every turn they started since midnight UTC —
-- inside the owner's admission lock, so a busy owner's turns waited on a scan that grew all
-- day. owner_usage holds one row per owner and UTC day, kept by a trigger on turns in the
-- same transaction: a turn counts as a message when it starts (chat and cli triggers), and
-- its cost is added as it grows, on the day the turn started (as the scan did). The counter
-- only grows: deleting a conversation no longer gives back the day's budget (limits fail
-- closed).

-- +goose Up
CREATE TABLE owner_usage (
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    day         date NOT NULL,
    messages    integer NOT NULL DEFAULT 0,
    cost_micros bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (owner_id, day)
);
ALTER TABLE owner_usage ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON owner_usage
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE ON owner_usage TO steward_app;

INSERT INTO owner_usage (owner_id, day, messages, cost_micros)
SELECT owner_id, (created_at AT TIME ZONE 'UTC')::date,
    count(*) FILTER (WHERE trigger IN ('chat', 'cli')), COALESCE(sum(cost_micros), 0)
FROM turns GROUP BY 1, 2;
-- Forced only now: the migrating role owns the table and filled it above, across owners.
ALTER TABLE owner_usage FORCE ROW LEVEL SECURITY;

-- +goose StatementBegin
CREATE FUNCTION owner_usage_count() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
    m integer := 0;
    c bigint := NEW.cost_micros;
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.trigger IN ('chat', 'cli') THEN
            m := 1;
        END IF;
    ELSE
        c := NEW.cost_micros - OLD.cost_micros;
    END IF;
    IF m <> 0 OR c <> 0 THEN
        INSERT INTO owner_usage AS u (owner_id, day, messages, cost_micros)
        VALUES (NEW.owner_id, (NEW.created_at AT TIME ZONE 'UTC')::date, m, c)
        ON CONFLICT (owner_id, day) DO UPDATE
            SET messages = u.messages + EXCLUDED.messages, cost_micros = u.cost_micros + EXCLUDED.cost_micros;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER turns_usage AFTER INSERT ON turns
    FOR EACH ROW EXECUTE FUNCTION owner_usage_count();
CREATE TRIGGER turns_usage_cost AFTER UPDATE OF cost_micros ON turns
    FOR EACH ROW WHEN (NEW.cost_micros IS DISTINCT FROM OLD.cost_micros) EXECUTE FUNCTION owner_usage_count();

-- +goose Down
DROP TRIGGER turns_usage_cost ON turns;
DROP TRIGGER turns_usage ON turns;
DROP FUNCTION owner_usage_count();
DROP TABLE owner_usage;
