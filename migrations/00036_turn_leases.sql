-- A turn's lease says a live process is working on it (docs/ARCHITECTURE.md §2, "A turn
-- outlives its process"): a running turn holds one from its start, renewed while it waits on
-- its model; a resuming turn from its claim. The sweep finds, across owners, the turns whose
-- lease lapsed — their process died — to fail a running one and recover a resuming one:
-- steward_door reads the lease (internal/store/door.go: ScanSweepOwners).

-- +goose Up
GRANT SELECT (lease_until) ON turns TO steward_door;
CREATE INDEX turns_leased ON turns (lease_until) WHERE status IN ('running', 'resuming');

-- +goose Down
DROP INDEX turns_leased;
REVOKE SELECT (lease_until) ON turns FROM steward_door;
