-- Documents the owner uploads (or Steward saves with save_document, after asking): the
-- original bytes, their extracted text and its metadata, per owner under row-level security
-- (issue 12). Their text is chunked into memory_chunks with source_kind 'document' and
-- origin 'document' (untrusted), so recall and search_documents find it.

-- +goose Up
CREATE TABLE documents (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id     uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    content_type text NOT NULL,
    size_bytes   bigint NOT NULL CHECK (size_bytes >= 0),
    sha256       text NOT NULL,
    content      bytea NOT NULL,
    text         text NOT NULL,
    source       text NOT NULL CHECK (source IN ('upload', 'tool')),
    turn_id      uuid,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX documents_owner ON documents (owner_id, created_at DESC);
ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE documents FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON documents
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, DELETE ON documents TO steward_app;

-- +goose Down
DROP TABLE documents;
