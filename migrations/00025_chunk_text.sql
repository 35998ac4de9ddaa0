-- Memory stores an exchange once (issue 14): ingestion skips a conversation chunk whose exact
-- text the owner already has as a current chunk of the same kind and origin, so recall does
-- not return the same words twice and a repeated request ("remind me to buy milk") adds no
-- embedding call and no HNSW insertion. This index finds a text's current chunks by md5.

-- +goose Up
CREATE INDEX memory_chunks_text ON memory_chunks (owner_id, md5(text)) WHERE superseded_at IS NULL;

-- +goose Down
DROP INDEX memory_chunks_text;
