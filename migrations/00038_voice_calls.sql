-- Voice (docs/ARCHITECTURE.md §18): each transcription and each speech an owner asks for is a
-- row of voice_calls, with the model, the tokens (the audio ones apart) and the estimated
-- cost. Its cost counts against the owner's daily budget (owner_usage, at COMMIT like a
-- turn's, §2) and the deployment's daily cap (GlobalCostToday reads these rows through the
-- door, like turns).

-- +goose Up
CREATE TABLE voice_calls (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id      uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    kind          text NOT NULL CHECK (kind IN ('transcribe', 'speak')),
    model         text NOT NULL,
    duration_ms   bigint NOT NULL CHECK (duration_ms >= 0),
    input_tokens  bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    audio_tokens  bigint NOT NULL DEFAULT 0,
    estimated     boolean NOT NULL DEFAULT false,
    cost_micros   bigint NOT NULL DEFAULT 0 CHECK (cost_micros >= 0),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX voice_calls_owner_created ON voice_calls (owner_id, created_at);
CREATE INDEX voice_calls_created ON voice_calls (created_at);
ALTER TABLE voice_calls ENABLE ROW LEVEL SECURITY;
ALTER TABLE voice_calls FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON voice_calls
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT ON voice_calls TO steward_app;
GRANT SELECT (created_at, cost_micros) ON voice_calls TO steward_door;
CREATE POLICY door ON voice_calls FOR SELECT TO steward_door USING (true);

-- +goose StatementBegin
CREATE FUNCTION voice_usage_count() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO owner_usage AS u (owner_id, day, messages, cost_micros)
    VALUES (NEW.owner_id, (NEW.created_at AT TIME ZONE 'UTC')::date, 0, NEW.cost_micros)
    ON CONFLICT (owner_id, day) DO UPDATE SET cost_micros = u.cost_micros + EXCLUDED.cost_micros;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE CONSTRAINT TRIGGER voice_calls_usage AFTER INSERT ON voice_calls
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION voice_usage_count();

-- +goose Down
DROP TRIGGER voice_calls_usage ON voice_calls;
DROP FUNCTION voice_usage_count();
DROP TABLE voice_calls;
