-- A turn records what tainted it (docs/ARCHITECTURE.md §3): turns.taint names the first
-- untrusted content it took in ("tool:web_fetch", "memory: a document 'x.csv' recalled from
-- memory", …), '' for a turn that saw only the owner's words. Memory reads it when it
-- remembers the turn: a tainted turn's exchange is untrusted and no fact is extracted from
-- it. A fact the remember tool stored in a tainted turn is untrusted too (memory_facts.origin
-- 'tool', as its chunk): recall fences it and search_memory taints the turn that finds it.

-- +goose Up
ALTER TABLE turns ADD COLUMN taint text NOT NULL DEFAULT '';
ALTER TABLE memory_facts ADD COLUMN origin text NOT NULL DEFAULT 'owner' CHECK (origin IN ('owner', 'tool'));

-- +goose Down
ALTER TABLE memory_facts DROP COLUMN origin;
ALTER TABLE turns DROP COLUMN taint;
