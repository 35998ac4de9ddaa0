-- The scheduler's sweep and its drain of lost continuations find their work across owners
-- in one door-side query each (docs/ARCHITECTURE.md §10), instead of one owner transaction
-- per owner on every tick: steward_door reads, through "door" policies FOR SELECT, only the
-- columns those queries name (internal/store/door.go: ScanSweepOwners, ScanContinuingTurns):
--   turns                a turn's id, owner, status, expiry and last save
--   job_runs             when a running run started
--   household_approvals  a pending vote's requester and expiry
-- Partial indexes keep each scan to the few rows in those states.

-- +goose Up
GRANT SELECT (id, owner_id, status, expires_at, updated_at) ON turns TO steward_door;
GRANT SELECT (started_at) ON job_runs TO steward_door;
GRANT SELECT (requester_id, status, expires_at) ON household_approvals TO steward_door;
CREATE POLICY door ON household_approvals FOR SELECT TO steward_door USING (true);
CREATE INDEX turns_running ON turns (updated_at) WHERE status = 'running';
CREATE INDEX job_runs_running ON job_runs (started_at) WHERE status = 'running';
CREATE INDEX household_approvals_pending ON household_approvals (expires_at) WHERE status = 'pending';

-- +goose Down
DROP INDEX household_approvals_pending;
DROP INDEX job_runs_running;
DROP INDEX turns_running;
DROP POLICY door ON household_approvals;
REVOKE SELECT (requester_id, status, expires_at) ON household_approvals FROM steward_door;
REVOKE SELECT (started_at) ON job_runs FROM steward_door;
REVOKE SELECT (id, owner_id, status, expires_at, updated_at) ON turns FROM steward_door;
