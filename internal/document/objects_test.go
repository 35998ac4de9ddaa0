package document_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/awsapi/awsapitest"
	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/document/documenttest"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
)

func bucketService(t *testing.T) (*document.Service, *awsapitest.S3, testdb.Opened) {
	t.Helper()
	db := testdb.Open(t, 4)
	fake := awsapitest.NewS3(t, "steward-docs")
	bucket, err := awsapi.NewBucket(awsapitest.Creds, "steward-docs", fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &document.Service{Store: db.Store, Objects: bucket}, fake, db
}

// TestDocumentsInBucket: with a bucket, an upload's bytes go to S3 under
// owner_id/document_id (signed requests), not to PostgreSQL; Content returns them byte for
// byte, another owner gets not_found, a saved page is downloadable the same way, and a
// delete deletes the object.
func TestDocumentsInBucket(t *testing.T) {
	t.Parallel()
	svc, fake, db := bucketService(t)
	ctx := context.Background()
	a, _ := db.Owner(t, "alice")
	alice := a.ID
	b, _ := db.Owner(t, "bob")
	bob := b.ID
	pdf := documenttest.PDF(t, "The boiler was serviced in October.")
	doc, err := svc.Upload(ctx, alice, "boiler.pdf", "application/pdf", pdf)
	if err != nil {
		t.Fatal(err)
	}
	key := alice.String() + "/" + doc.ID.String()
	if got := fake.Objects()[key]; !bytes.Equal(got, pdf) || fake.ContentType(key) != doctext.TypePDF {
		t.Fatalf("object %s: %d bytes, type %q; want the %d bytes uploaded", key, len(got), fake.ContentType(key), len(pdf))
	}
	f, err := svc.Content(ctx, alice, doc.ID)
	if err != nil || !bytes.Equal(f.Data, pdf) || f.Name != "boiler.pdf" || f.ContentType != doctext.TypePDF {
		t.Fatalf("content: %s %s %d bytes, %v", f.Name, f.ContentType, len(f.Data), err)
	}
	if page, err := svc.Read(ctx, alice, doc.ID, 0, 0); err != nil || !strings.Contains(page.Text, "serviced in October") {
		t.Fatalf("read: %+v %v", page, err)
	}
	// The row holds no bytes: without the bucket they cannot be read.
	if _, err := (&document.Service{Store: db.Store}).Content(ctx, alice, doc.ID); err == nil || !strings.Contains(err.Error(), "STEWARD_DOCUMENT_BUCKET") {
		t.Errorf("content without the bucket: %v; want an error naming STEWARD_DOCUMENT_BUCKET", err)
	}
	if _, err := svc.Content(ctx, bob, doc.ID); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Errorf("bob's content of alice's document: %v; want not_found", err)
	}
	saved, err := svc.SavePage(ctx, alice, steward.SavedPage{URL: "https://example.com/notes", Text: "Saved page text."})
	if err != nil {
		t.Fatal(err)
	}
	if f, err := svc.Content(ctx, alice, saved.ID); err != nil || string(f.Data) != "Saved page text." {
		t.Fatalf("saved page content: %q %v", f.Data, err)
	}
	if err := svc.Delete(ctx, bob, doc.ID); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Errorf("bob deletes: %v", err)
	}
	if err := svc.Delete(ctx, alice, doc.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := fake.Objects()[key]; ok || len(fake.Objects()) != 1 {
		t.Errorf("after the delete the bucket holds %d objects (deleted one present: %v)", len(fake.Objects()), ok)
	}
	if fake.Refused != 0 {
		t.Errorf("the fake refused %d requests' signatures", fake.Refused)
	}
}

// TestDocumentsInBucketDatabaseFailure: when the row cannot be stored (here: an owner that
// does not exist), the object already put is deleted — the bucket holds nothing.
func TestDocumentsInBucketDatabaseFailure(t *testing.T) {
	t.Parallel()
	svc, fake, _ := bucketService(t)
	_, err := svc.Upload(context.Background(), uuid.New(), "notes.txt", "text/plain", []byte("orphan?"))
	if err == nil {
		t.Fatal("upload for an unknown owner succeeded")
	}
	if fake.Puts != 1 || len(fake.Objects()) != 0 {
		t.Fatalf("puts %d, objects left %v; want the one put object deleted", fake.Puts, fake.Objects())
	}
}
