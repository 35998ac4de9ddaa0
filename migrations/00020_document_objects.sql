-- A document's original bytes live either in documents.content (PostgreSQL, the default) or
-- in the S3 bucket STEWARD_DOCUMENT_BUCKET names, under content_key (owner_id/document_id),
-- never both (issue 12). The row stays under the documents table's row-level security; the
-- object is reached only through the row.

-- +goose Up
ALTER TABLE documents ALTER COLUMN content DROP NOT NULL;
ALTER TABLE documents ADD COLUMN content_key text;
ALTER TABLE documents ADD CONSTRAINT documents_content_one_place CHECK ((content IS NULL) <> (content_key IS NULL));

-- +goose Down
DELETE FROM documents WHERE content IS NULL;
ALTER TABLE documents DROP CONSTRAINT documents_content_one_place;
ALTER TABLE documents DROP COLUMN content_key;
ALTER TABLE documents ALTER COLUMN content SET NOT NULL;
