-- Recall under row-level security (issue 14; README "Performance", make bench-recall).
-- memory_chunks is hash-partitioned by owner_id into 16 partitions, each with its own HNSW
-- index. Every search filters owner_id = $1, so the planner (or the executor, for a generic
-- plan) prunes to the owner's partition: the graph an owner's search walks holds that owner's
-- chunks and those of the owners hashed beside them, not every owner's. With one index for
-- all owners, the ef_search candidates of a search included other owners' chunks, which the
-- filter then dropped: at 100,000 chunks of one owner among 150,000, recall@10 at
-- hnsw.ef_search 40 was 0.94–0.97 depending on the build; on the owner's own graph it is 0.98
-- at the same latency. The more owners share a table, the larger the difference.
--
-- A partitioned table's primary key and unique indexes must include the partition key:
-- the primary key is (owner_id, id) (an id is still unique: gen_random_uuid), and
-- memory_chunks_fact, (owner_id, source_id) WHERE …, already does (AddFactChunk's ON
-- CONFLICT). No foreign key references memory_chunks. The policy, the grants and the
-- forced row-level security are set on the partitioned table, which is the only table the
-- app names (a partition is not granted to steward_app, so it cannot be read around the
-- policy; each partition has forced row-level security and the same owner_isolation policy,
-- as the catalog lint requires of every table with an owner_id). memory_fact_superseded (migration 00005) updates
-- memory_chunks by name, so it reaches the partitions. An index created on memory_chunks later is created on every
-- partition.
--
-- The rows are copied as they are (ids, timestamps and superseded rows included). The
-- migrating role owns the table but is subject to its forced row-level security: it lifts it
-- on the old table, inside this migration's transaction, to read every owner's rows.

-- +goose Up
ALTER TABLE memory_chunks RENAME TO memory_chunks_unpartitioned;
ALTER TABLE memory_chunks_unpartitioned NO FORCE ROW LEVEL SECURITY;
ALTER INDEX memory_chunks_pkey RENAME TO memory_chunks_unpartitioned_pkey;
ALTER INDEX memory_chunks_embedding RENAME TO memory_chunks_unpartitioned_embedding;
ALTER INDEX memory_chunks_fact RENAME TO memory_chunks_unpartitioned_fact;
ALTER INDEX memory_chunks_owner RENAME TO memory_chunks_unpartitioned_owner;
ALTER INDEX memory_chunks_source RENAME TO memory_chunks_unpartitioned_source;

CREATE TABLE memory_chunks (
    id            uuid NOT NULL DEFAULT gen_random_uuid(),
    owner_id      uuid NOT NULL,
    source_kind   text NOT NULL, -- conversation | fact | summary | document
    source_id     text NOT NULL DEFAULT '',
    text          text NOT NULL,
    embedding     vector(768) STORAGE PLAIN NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    superseded_at timestamptz,
    origin        text NOT NULL
) PARTITION BY HASH (owner_id);
-- +goose StatementBegin
DO $$
BEGIN
    FOR i IN 0..15 LOOP
        EXECUTE format('CREATE TABLE memory_chunks_p%s PARTITION OF memory_chunks FOR VALUES WITH (MODULUS 16, REMAINDER %s)', i, i);
        -- Reached through memory_chunks, whose policy applies; read directly (only its
        -- owner could), the partition applies the same one.
        EXECUTE format('ALTER TABLE memory_chunks_p%s ENABLE ROW LEVEL SECURITY', i);
        EXECUTE format('ALTER TABLE memory_chunks_p%s FORCE ROW LEVEL SECURITY', i);
        EXECUTE format($p$CREATE POLICY owner_isolation ON memory_chunks_p%s
            USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
            WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)$p$, i);
    END LOOP;
END
$$;
-- +goose StatementEnd

INSERT INTO memory_chunks (id, owner_id, source_kind, source_id, text, embedding, created_at, superseded_at, origin)
SELECT id, owner_id, source_kind, source_id, text, embedding, created_at, superseded_at, origin
FROM memory_chunks_unpartitioned;
DROP TABLE memory_chunks_unpartitioned;

ALTER TABLE memory_chunks ADD CONSTRAINT memory_chunks_pkey PRIMARY KEY (owner_id, id);
ALTER TABLE memory_chunks ADD CONSTRAINT memory_chunks_owner_id_fkey
    FOREIGN KEY (owner_id) REFERENCES owners (id) ON DELETE CASCADE;
ALTER TABLE memory_chunks ADD CONSTRAINT memory_chunks_origin_check
    CHECK (origin IN ('owner', 'schedule', 'model', 'tool', 'webhook', 'document', 'web'));
CREATE INDEX memory_chunks_owner ON memory_chunks (owner_id, created_at DESC);
CREATE INDEX memory_chunks_source ON memory_chunks (owner_id, source_kind, source_id) WHERE superseded_at IS NULL;
CREATE UNIQUE INDEX memory_chunks_fact ON memory_chunks (owner_id, source_id)
    WHERE source_kind = 'fact' AND superseded_at IS NULL;
CREATE INDEX memory_chunks_embedding ON memory_chunks
    USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops);

ALTER TABLE memory_chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_chunks FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON memory_chunks
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON memory_chunks TO steward_app;

-- +goose Down
ALTER TABLE memory_chunks RENAME TO memory_chunks_partitioned;
ALTER TABLE memory_chunks_partitioned NO FORCE ROW LEVEL SECURITY;
ALTER INDEX memory_chunks_pkey RENAME TO memory_chunks_partitioned_pkey;
ALTER INDEX memory_chunks_embedding RENAME TO memory_chunks_partitioned_embedding;
ALTER INDEX memory_chunks_fact RENAME TO memory_chunks_partitioned_fact;
ALTER INDEX memory_chunks_owner RENAME TO memory_chunks_partitioned_owner;
ALTER INDEX memory_chunks_source RENAME TO memory_chunks_partitioned_source;

CREATE TABLE memory_chunks (
    id            uuid NOT NULL DEFAULT gen_random_uuid(),
    owner_id      uuid NOT NULL,
    source_kind   text NOT NULL,
    source_id     text NOT NULL DEFAULT '',
    text          text NOT NULL,
    embedding     vector(768) STORAGE PLAIN NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    superseded_at timestamptz,
    origin        text NOT NULL
);
INSERT INTO memory_chunks (id, owner_id, source_kind, source_id, text, embedding, created_at, superseded_at, origin)
SELECT id, owner_id, source_kind, source_id, text, embedding, created_at, superseded_at, origin
FROM memory_chunks_partitioned;
DROP TABLE memory_chunks_partitioned;

ALTER TABLE memory_chunks ADD CONSTRAINT memory_chunks_pkey PRIMARY KEY (id);
ALTER TABLE memory_chunks ADD CONSTRAINT memory_chunks_owner_id_fkey
    FOREIGN KEY (owner_id) REFERENCES owners (id) ON DELETE CASCADE;
ALTER TABLE memory_chunks ADD CONSTRAINT memory_chunks_origin_check
    CHECK (origin IN ('owner', 'schedule', 'model', 'tool', 'webhook', 'document', 'web'));
CREATE INDEX memory_chunks_owner ON memory_chunks (owner_id, created_at DESC);
CREATE INDEX memory_chunks_source ON memory_chunks (owner_id, source_kind, source_id) WHERE superseded_at IS NULL;
CREATE UNIQUE INDEX memory_chunks_fact ON memory_chunks (owner_id, source_id)
    WHERE source_kind = 'fact' AND superseded_at IS NULL;
CREATE INDEX memory_chunks_embedding ON memory_chunks
    USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops);

ALTER TABLE memory_chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_chunks FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON memory_chunks
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON memory_chunks TO steward_app;
