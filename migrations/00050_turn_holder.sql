-- A turn's holder names the process that holds its lease (docs/ARCHITECTURE.md §2, "A turn
-- outlives its process"): `steward serve` writes "host/pid/start" (its host name, process id
-- and the kernel's start time of that process) wherever it sets a lease; a Lambda function
-- writes nothing (its lease alone decides). The sweep of a `steward serve` reads, across
-- owners, the turns held on its own host, and a holder whose process is gone — killed, and
-- perhaps restarted as this one — has its turns' leases ended at once, so they are failed or
-- recovered now instead of when the lease would lapse (STEWARD_LEASE, 15 minutes):
-- steward_door reads the holder (internal/store/door.go: ScanHeldTurns).

-- +goose Up
ALTER TABLE turns ADD COLUMN holder text NOT NULL DEFAULT '';
GRANT SELECT (holder) ON turns TO steward_door;

-- +goose Down
REVOKE SELECT (holder) ON turns FROM steward_door;
ALTER TABLE turns DROP COLUMN holder;
