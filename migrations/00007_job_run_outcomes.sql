-- A job or webhook run that suspended for the owner's approval ends when its turn does: the
-- run follows its turn's final status, so the activity feed does not show it waiting forever.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION job_run_follows_turn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_runs
    SET status = CASE NEW.status WHEN 'completed' THEN 'completed' WHEN 'aborted' THEN 'aborted' ELSE 'failed' END,
        error = CASE WHEN NEW.status = 'expired' THEN 'the approval expired' ELSE COALESCE(NEW.error, '') END,
        finished_at = now()
    WHERE owner_id = NEW.owner_id AND turn_id = NEW.id AND status = 'suspended';
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER job_run_follows_turn AFTER UPDATE OF status ON turns
    FOR EACH ROW WHEN (NEW.status IN ('completed', 'failed', 'aborted', 'expired') AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION job_run_follows_turn();

-- +goose Down
DROP TRIGGER job_run_follows_turn ON turns;
DROP FUNCTION job_run_follows_turn();
