-- Turns that outlive a function's deadline (issue 16): a turn stopped between steps, its
-- state saved, waits as 'continuing' for a fresh invocation to claim it exactly once
-- (docs/ARCHITECTURE.md §2, §10).

-- +goose Up
ALTER TABLE turns DROP CONSTRAINT turns_status_check;
ALTER TABLE turns ADD CONSTRAINT turns_status_check
    CHECK (status IN ('running', 'suspended', 'resuming', 'continuing', 'completed', 'failed', 'aborted', 'expired'));
CREATE INDEX turns_continuing ON turns (owner_id, updated_at) WHERE status = 'continuing';

-- +goose Down
DROP INDEX turns_continuing;
UPDATE turns SET status = 'failed', error = 'interrupted: continuing turns are not supported by this version',
    state = NULL, finished_at = now() WHERE status = 'continuing';
ALTER TABLE turns DROP CONSTRAINT turns_status_check;
ALTER TABLE turns ADD CONSTRAINT turns_status_check
    CHECK (status IN ('running', 'suspended', 'resuming', 'completed', 'failed', 'aborted', 'expired'));
