package config

// Documents is the owner's documents and uploads: their size, how many are read and received
// at once, and where their original bytes are kept.
type Documents struct {
	// MaxDocumentBytes caps an uploaded document (POST /v1/documents), 20 MB by default
	// (STEWARD_MAX_DOCUMENT_BYTES).
	MaxDocumentBytes int64
	// DocumentReaders and DocumentReadersPerOwner bound the documents read at once in this
	// process, in all and for one owner (STEWARD_DOCUMENT_READERS,
	// STEWARD_DOCUMENT_READERS_PER_OWNER); zero means doctext.DefaultReaders.
	DocumentReaders, DocumentReadersPerOwner int
	// UploadsInFlight and UploadsPerOwner bound the document and voice uploads being received
	// at once in this process, in all and for one owner (STEWARD_UPLOADS_IN_FLIGHT, 8;
	// STEWARD_UPLOADS_PER_OWNER, 2).
	UploadsInFlight, UploadsPerOwner int
	// DocumentBucket is the S3 bucket new documents' original bytes are kept in, under
	// owner_id/document_id (STEWARD_DOCUMENT_BUCKET); empty keeps them in PostgreSQL.
	DocumentBucket string
	// DocumentEndpoint is an S3-compatible server's URL for DocumentBucket, addressed
	// path-style (STEWARD_DOCUMENT_ENDPOINT); empty means AWS S3 in AWS_REGION.
	DocumentEndpoint string
}

// documents reads the Documents area: an endpoint needs its bucket.
func (r *reader) documents() Documents {
	d := Documents{
		MaxDocumentBytes:        int64(r.intIn("STEWARD_MAX_DOCUMENT_BYTES", 20<<20, 1024, 100<<20)),
		DocumentReaders:         r.intIn("STEWARD_DOCUMENT_READERS", 0, 0, 256),
		DocumentReadersPerOwner: r.intIn("STEWARD_DOCUMENT_READERS_PER_OWNER", 0, 0, 256),
		UploadsInFlight:         r.intIn("STEWARD_UPLOADS_IN_FLIGHT", 8, 1, 1024),
		UploadsPerOwner:         r.intIn("STEWARD_UPLOADS_PER_OWNER", 2, 1, 1024),
		DocumentBucket:          r.str("STEWARD_DOCUMENT_BUCKET", ""),
		DocumentEndpoint:        r.str("STEWARD_DOCUMENT_ENDPOINT", ""),
	}
	r.httpURL("STEWARD_DOCUMENT_ENDPOINT", d.DocumentEndpoint)
	if d.DocumentEndpoint != "" && d.DocumentBucket == "" {
		r.fail("STEWARD_DOCUMENT_ENDPOINT", d.DocumentEndpoint, "needs STEWARD_DOCUMENT_BUCKET, the bucket on that server")
	}
	return d
}
