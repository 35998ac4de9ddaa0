-- Model calls made for an owner outside their turns (docs/ARCHITECTURE.md §2, budgets):
-- memory's fact extraction and consolidation (internal/memory). Each is a row with its model,
-- tokens and cost, which counts against the owner's daily budget (owner_usage, at COMMIT, by
-- the trigger function voice calls use, renamed for both) and the deployment's daily cap
-- (GlobalCostToday reads these rows through the door), so no model call is free.

-- +goose Up
CREATE TABLE model_calls (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id      uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    kind          text NOT NULL CHECK (kind IN ('extract_facts', 'consolidate')),
    model         text NOT NULL,
    input_tokens  bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    cost_micros   bigint NOT NULL DEFAULT 0 CHECK (cost_micros >= 0),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX model_calls_owner_created ON model_calls (owner_id, created_at);
CREATE INDEX model_calls_created ON model_calls (created_at);
ALTER TABLE model_calls ENABLE ROW LEVEL SECURITY;
ALTER TABLE model_calls FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON model_calls
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT ON model_calls TO steward_app;
GRANT SELECT (created_at, cost_micros) ON model_calls TO steward_door;
CREATE POLICY door ON model_calls FOR SELECT TO steward_door USING (true);
ALTER FUNCTION voice_usage_count() RENAME TO call_usage_count;
CREATE CONSTRAINT TRIGGER model_calls_usage AFTER INSERT ON model_calls
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION call_usage_count();

-- +goose Down
DROP TRIGGER model_calls_usage ON model_calls;
ALTER FUNCTION call_usage_count() RENAME TO voice_usage_count;
DROP TABLE model_calls;
