-- Budgets are computed from the turns themselves at every admission: index today's turns per
-- owner (with what the sums read), and the deployment's cost by day.

-- +goose Up
CREATE INDEX turns_owner_created ON turns (owner_id, created_at) INCLUDE (trigger, cost_micros);
DROP INDEX turns_created;
CREATE INDEX turns_created ON turns (created_at) INCLUDE (cost_micros);

-- +goose Down
DROP INDEX turns_created;
CREATE INDEX turns_created ON turns (created_at);
DROP INDEX turns_owner_created;
