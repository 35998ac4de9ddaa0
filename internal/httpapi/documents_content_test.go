package httpapi_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/document/documenttest"
	"github.com/stewardhq/steward/internal/steward"
)

// multipartBody builds a multipart/form-data body: a "note" field, then (when field is not
// empty) a file part under field with filename and contentType.
func multipartBody(t *testing.T, field, filename, contentType string, data []byte) (string, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if err := mw.WriteField("note", "from the test"); err != nil {
		t.Fatal(err)
	}
	if field != "" {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+field+`"; filename="`+filename+`"`)
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
		pw, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = pw.Write(data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), mw.FormDataContentType()
}

func uploadMultipart(t *testing.T, base, key, field, filename, contentType string, data []byte) response {
	t.Helper()
	body, ct := multipartBody(t, field, filename, contentType, data)
	return doHTTP(t, base, request{method: "POST", path: "/v1/documents", key: key, body: body, header: map[string]string{"Content-Type": ct}})
}

// TestDocumentMultipartUpload: a PDF sent as the multipart field "file" is stored under its
// filename with its text extracted, and GET /v1/documents/{id}/content returns its bytes
// unchanged, as an attachment with the stored type and nosniff; bob gets 404 for it.
func TestDocumentMultipartUpload(t *testing.T) {
	t.Parallel()
	base, alice, bob := docServer(t, 1<<20)
	pdf := documenttest.PDF(t, "The lease ends in March.", "Page two: the deposit is returned.")
	resp := uploadMultipart(t, base, alice, "file", "lease.pdf", "application/pdf", pdf)
	var created struct{ Document steward.Document }
	if err := json.Unmarshal(resp.body, &created); err != nil || resp.status != 201 || created.Document.Name != "lease.pdf" ||
		created.Document.Size != int64(len(pdf)) {
		t.Fatalf("multipart upload: %d %s", resp.status, resp.body)
	}
	path := "/v1/documents/" + created.Document.ID.String()
	if resp := doHTTP(t, base, request{method: "GET", path: path, key: alice}); resp.status != 200 || !strings.Contains(string(resp.body), "deposit is returned") {
		t.Fatalf("read: %d %s", resp.status, resp.body)
	}
	resp = doHTTP(t, base, request{method: "GET", path: path + "/content", key: alice})
	if resp.status != 200 || !bytes.Equal(resp.body, pdf) {
		t.Fatalf("content: %d, %d bytes; want 200 and the %d bytes uploaded", resp.status, len(resp.body), len(pdf))
	}
	for h, want := range map[string]string{"Content-Type": "application/pdf", "Content-Disposition": `attachment; filename=lease.pdf`,
		"X-Content-Type-Options": "nosniff"} {
		if got := resp.header.Get(h); got != want {
			t.Errorf("content %s = %q; want %q", h, got, want)
		}
	}
	if resp := doHTTP(t, base, request{method: "GET", path: path + "/content", key: bob}); resp.status != 404 || bytes.Contains(resp.body, pdf[:20]) {
		t.Errorf("bob downloads alice's document: %d %s; want 404", resp.status, resp.body)
	}
}

// TestDocumentContentFilename: a name with quotes and path separators comes back as a
// filename that cannot break out of the header or name a path.
func TestDocumentContentFilename(t *testing.T) {
	t.Parallel()
	base, alice, _ := docServer(t, 1<<20)
	resp := upload(t, base, alice, `..%2F"evil"%0D.txt`, "text/plain", []byte("plain text"))
	if resp.status != 422 { // a control character in the name is refused at upload
		t.Errorf("name with CR: %d %s; want 422", resp.status, resp.body)
	}
	resp = upload(t, base, alice, `..%2F"evil"%5Cx.txt`, "text/plain", []byte("plain text"))
	var created struct{ Document steward.Document }
	if err := json.Unmarshal(resp.body, &created); err != nil || resp.status != 201 {
		t.Fatalf("upload: %d %s", resp.status, resp.body)
	}
	resp = doHTTP(t, base, request{method: "GET", path: "/v1/documents/" + created.Document.ID.String() + "/content", key: alice})
	if got := resp.header.Get("Content-Disposition"); resp.status != 200 || got != `attachment; filename=..__evil__x.txt` {
		t.Errorf("content: %d, Content-Disposition %q", resp.status, got)
	}
	if string(resp.body) != "plain text" {
		t.Errorf("content body %q", resp.body)
	}
}

// TestDocumentMultipartRefusals: a multipart body without a "file" field is 400, a file of a
// type Steward does not read 415, over the limit 413, a corrupt PDF 422, a truncated body
// 400 — and nothing is stored.
func TestDocumentMultipartRefusals(t *testing.T) {
	t.Parallel()
	base, alice, _ := docServer(t, 4096)
	if resp := uploadMultipart(t, base, alice, "", "", "", nil); resp.status != 400 || !strings.Contains(string(resp.body), `no \"file\" field`) {
		t.Errorf("no file field: %d %s; want 400 naming the field", resp.status, resp.body)
	}
	if resp := uploadMultipart(t, base, alice, "attachment", "notes.txt", "text/plain", []byte("hi")); resp.status != 400 {
		t.Errorf("file under another field: %d %s; want 400", resp.status, resp.body)
	}
	if resp := uploadMultipart(t, base, alice, "file", "tool.exe", "application/x-msdownload", []byte("MZ")); resp.status != 415 {
		t.Errorf("unknown type: %d %s; want 415", resp.status, resp.body)
	}
	if resp := uploadMultipart(t, base, alice, "file", "big.txt", "text/plain", bytes.Repeat([]byte("word "), 2000)); resp.status != 413 {
		t.Errorf("over the limit: %d %s; want 413", resp.status, resp.body)
	}
	if resp := uploadMultipart(t, base, alice, "file", "broken.pdf", "application/pdf", []byte("%PDF-1.4 not really")); resp.status != 422 {
		t.Errorf("corrupt PDF: %d %s; want 422", resp.status, resp.body)
	}
	body, ct := multipartBody(t, "file", "cut.txt", "text/plain", []byte("this body is cut off"))
	resp := doHTTP(t, base, request{method: "POST", path: "/v1/documents", key: alice, body: body[:len(body)-20], header: map[string]string{"Content-Type": ct}})
	if resp.status != 400 {
		t.Errorf("truncated multipart body: %d %s; want 400", resp.status, resp.body)
	}
	if resp := doHTTP(t, base, request{method: "POST", path: "/v1/documents", key: alice, body: "x",
		header: map[string]string{"Content-Type": "multipart/form-data"}}); resp.status != 400 {
		t.Errorf("multipart without a boundary: %d %s; want 400", resp.status, resp.body)
	}
	if docs := listDocs(t, base, alice); len(docs) != 0 {
		t.Fatalf("refused uploads stored %d documents: %+v", len(docs), docs)
	}
}
