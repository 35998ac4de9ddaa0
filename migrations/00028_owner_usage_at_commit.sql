-- owner_usage is counted at COMMIT (issue 14). As plain AFTER triggers, the day's counter row
-- was updated mid-transaction and stayed locked until the transaction ended: concurrent turns
-- of one owner queued on it (a turn's save waited on another's). As deferred constraint
-- triggers, each row's change is added when its transaction commits, so the row is locked
-- for the commit alone. Every change is still counted, with the delta of its own statement.

-- +goose Up
DROP TRIGGER turns_usage_cost ON turns;
DROP TRIGGER turns_usage ON turns;
CREATE CONSTRAINT TRIGGER turns_usage AFTER INSERT ON turns
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION owner_usage_count();
CREATE CONSTRAINT TRIGGER turns_usage_cost AFTER UPDATE OF cost_micros ON turns
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.cost_micros IS DISTINCT FROM OLD.cost_micros) EXECUTE FUNCTION owner_usage_count();

-- +goose Down
DROP TRIGGER turns_usage_cost ON turns;
DROP TRIGGER turns_usage ON turns;
CREATE TRIGGER turns_usage AFTER INSERT ON turns
    FOR EACH ROW EXECUTE FUNCTION owner_usage_count();
CREATE TRIGGER turns_usage_cost AFTER UPDATE OF cost_micros ON turns
    FOR EACH ROW WHEN (NEW.cost_micros IS DISTINCT FROM OLD.cost_micros) EXECUTE FUNCTION owner_usage_count();
