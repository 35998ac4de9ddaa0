-- Stopping a turn (issue 28 §2, docs/ARCHITECTURE.md §2 "Cancelling a turn"): the owner's
-- request is stored on the turn, so it reaches the process running it, wherever that is;
-- the loop reads it at each step boundary and ends the turn 'cancelled'. A turn that no
-- process is running (suspended, continuing) is cancelled at once, and its pending writes
-- never run: the claims require no request, and a suspension or continuation saved after a
-- request is saved cancelled instead (SaveTurn).

-- +goose Up
ALTER TABLE turns ADD COLUMN cancel_requested_at timestamptz;
ALTER TABLE turns DROP CONSTRAINT turns_status_check;
ALTER TABLE turns ADD CONSTRAINT turns_status_check
    CHECK (status IN ('running', 'suspended', 'resuming', 'continuing', 'completed', 'failed', 'aborted', 'expired', 'cancelled'));
-- A job or webhook run whose suspended turn is cancelled ends too (failed, with the turn's
-- error), as for any other end of its turn.
DROP TRIGGER job_run_follows_turn ON turns;
CREATE TRIGGER job_run_follows_turn AFTER UPDATE OF status ON turns
    FOR EACH ROW WHEN (NEW.status IN ('completed', 'failed', 'aborted', 'expired', 'cancelled') AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION job_run_follows_turn();

-- +goose Down
DROP TRIGGER job_run_follows_turn ON turns;
CREATE TRIGGER job_run_follows_turn AFTER UPDATE OF status ON turns
    FOR EACH ROW WHEN (NEW.status IN ('completed', 'failed', 'aborted', 'expired') AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION job_run_follows_turn();
UPDATE turns SET status = 'failed' WHERE status = 'cancelled';
ALTER TABLE turns DROP CONSTRAINT turns_status_check;
ALTER TABLE turns ADD CONSTRAINT turns_status_check
    CHECK (status IN ('running', 'suspended', 'resuming', 'continuing', 'completed', 'failed', 'aborted', 'expired'));
ALTER TABLE turns DROP COLUMN cancel_requested_at;
