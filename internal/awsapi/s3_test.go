package awsapi_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/awsapi/awsapitest"
	"github.com/stewardhq/steward/internal/config"
)

// TestBucketRoundTrip: an object put through the signed client comes back byte for byte with
// its content type, and is gone after a delete (a get is then an error naming NoSuchKey).
func TestBucketRoundTrip(t *testing.T) {
	fake := awsapitest.NewS3(t, "docs")
	b, err := awsapi.NewBucket(awsapitest.Creds, "docs", fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data := []byte{0, 1, 2, 0xff, 'a', '\n'}
	if err := b.Put(ctx, "owner/doc", "application/pdf", data); err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, "owner/doc")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get: %q, %v; want %q", got, err, data)
	}
	if ct := fake.ContentType("owner/doc"); ct != "application/pdf" {
		t.Errorf("content type %q", ct)
	}
	if err := b.Delete(ctx, "owner/doc"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "owner/doc"); err == nil || !strings.Contains(err.Error(), "NoSuchKey") {
		t.Errorf("get after delete: %v; want NoSuchKey", err)
	}
	if fake.Refused != 0 || len(fake.Objects()) != 0 {
		t.Errorf("refused %d, objects %v", fake.Refused, fake.Objects())
	}
}

// TestBucketNeedsCredentials: without credentials the client is not made, and says what is
// missing.
func TestBucketNeedsCredentials(t *testing.T) {
	_, err := awsapi.NewBucket(config.AWS{Region: "eu-west-1"}, "docs", "")
	if err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") || !strings.Contains(err.Error(), "STEWARD_DOCUMENT_BUCKET") {
		t.Fatalf("NewBucket without credentials: %v", err)
	}
}
