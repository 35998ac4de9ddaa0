-- A standing rule says how its predicate matches a call's arguments (issue 27 §4): 'exact',
-- the arguments are exactly the predicate (the canonical JSON the args hash uses), or
-- 'pattern', every argument the predicate names has that value and the others are anything.
-- Before, every rule matched as a pattern, so "always allow, for exactly these arguments"
-- also allowed the same arguments with more added.
--
-- Rows stored before keep a meaning that never lets more run without asking than before:
-- an allow rule with a predicate becomes exact — the approval card's "these arguments" was
-- meant so, and an API rule narrowed this way at worst asks again (its owner can make it a
-- pattern); a rule without a predicate (any arguments: "always" for the tool, the seeded
-- notify rule, a "*" deny) and every deny rule (which must go on refusing all it refused)
-- stay patterns. The column has no default: every insert says which it is.
--
-- The migrating role owns the table but is subject to its forced row-level security: it
-- lifts it inside this migration's transaction to update every owner's rows.

-- +goose Up
ALTER TABLE standing_rules ADD COLUMN match text NOT NULL DEFAULT 'exact' CHECK (match IN ('exact', 'pattern'));
ALTER TABLE standing_rules NO FORCE ROW LEVEL SECURITY;
UPDATE standing_rules SET match = 'pattern' WHERE predicate = '{}' OR effect = 'deny';
ALTER TABLE standing_rules FORCE ROW LEVEL SECURITY;
ALTER TABLE standing_rules ALTER COLUMN match DROP DEFAULT;

-- +goose Down
ALTER TABLE standing_rules DROP COLUMN match;
