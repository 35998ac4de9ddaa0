-- Recall at 100,000 chunks under row-level security (issue 14; README "Performance", make
-- bench-recall). The HNSW index of memory_chunks indexes the embedding as halfvec (16-bit
-- floats): half the index pages per search (768 dimensions: 1.5 KB an element instead of
-- 3 KB), so a search touches half the buffers, at recall@10 within a thousandth of the
-- float32 index's. The column stays vector(768) and every distance Steward reports is still
-- computed on it; only the index's ordering is approximate, as it already was. The searches
-- (queries/memory.sql, queries/memory_worker.sql) order by the same expression so the planner
-- uses the index. hnsw.ef_search is set per owner transaction (internal/store, beginOwnerSQL).

-- +goose Up
DROP INDEX memory_chunks_embedding;
CREATE INDEX memory_chunks_embedding ON memory_chunks
    USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops);

-- +goose Down
DROP INDEX memory_chunks_embedding;
CREATE INDEX memory_chunks_embedding ON memory_chunks USING hnsw (embedding vector_cosine_ops);
