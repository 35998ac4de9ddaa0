package lambdatest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTemplateDocumentBucket: the optional document bucket blocks every public access and is
// encrypted, and the functions' role may only get, put and delete its objects — nothing else
// in S3.
func TestTemplateDocumentBucket(t *testing.T) {
	t.Parallel()
	tpl, _ := openTemplate(t)
	b, err := tpl.GetS3BucketWithName("DocumentBucket")
	if err != nil {
		t.Fatal(err)
	}
	p := b.PublicAccessBlockConfiguration
	if p == nil || p.BlockPublicAcls == nil || !*p.BlockPublicAcls || p.BlockPublicPolicy == nil || !*p.BlockPublicPolicy ||
		p.IgnorePublicAcls == nil || !*p.IgnorePublicAcls || p.RestrictPublicBuckets == nil || !*p.RestrictPublicBuckets {
		t.Errorf("DocumentBucket does not block all public access: %+v", p)
	}
	if b.BucketEncryption == nil || len(b.BucketEncryption.ServerSideEncryptionConfiguration) == 0 {
		t.Error("DocumentBucket is not encrypted by default")
	}
	// goformation resolves the role's !If on HasDocumentBucket with the default (postgres),
	// so the statement is read from the template's text: TurnPolicy's block.
	text, err := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := regexp.MustCompile(`(?s)\n  TurnPolicy:\n(.*?)\n  [A-Za-z]+:\n`).FindStringSubmatch(string(text))
	if role == nil {
		t.Fatal("no TurnPolicy in template.yaml")
	}
	s3Actions := regexp.MustCompile(`s3:[A-Za-z*]+`).FindAllString(role[1], -1)
	if strings.Join(s3Actions, ",") != "s3:GetObject,s3:PutObject,s3:DeleteObject" {
		t.Errorf("TurnPolicy's S3 actions = %v; want exactly GetObject, PutObject, DeleteObject", s3Actions)
	}
	if !strings.Contains(role[1], "Resource: !Sub ${DocumentBucket.Arn}/*") {
		t.Errorf("TurnPolicy's S3 statement is not scoped to the document bucket's objects:\n%s", role[1])
	}
}
