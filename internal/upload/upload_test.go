package upload_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/upload"
)

// refusal checks err is the rate_limited refusal of reason, naming its knob and when to retry.
func refusal(t *testing.T, err error, reason, knob string) {
	t.Helper()
	var se *steward.Error
	if !errors.As(err, &se) {
		t.Fatalf("admit = %v; want a refusal", err)
	}
	if se.Code != steward.CodeRateLimited || se.Reason != reason || se.RetryAfter != upload.RetryAfter ||
		!strings.Contains(se.Message, knob) || !strings.Contains(se.Message, "try again in 5 seconds") {
		t.Errorf("refusal = %+v; want rate_limited %s naming %s, retry in 5 s", se, reason, knob)
	}
}

// TestGateBoundsUploads: one owner may have PerOwner uploads in flight and the process
// InFlight; one past either is refused at once, naming its limit; a release gives the place
// back (twice is once), to that owner and to everyone.
func TestGateBoundsUploads(t *testing.T) {
	g := &upload.Gate{InFlight: 3, PerOwner: 2}
	alice, bob, carol := uuid.New(), uuid.New(), uuid.New()
	a1, err := g.Admit(alice)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := g.Admit(alice)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Admit(alice)
	refusal(t, err, upload.ReasonPerOwner, "STEWARD_UPLOADS_PER_OWNER")
	b1, err := g.Admit(bob)
	if err != nil {
		t.Fatalf("bob while alice holds her share: %v", err)
	}
	_, err = g.Admit(carol)
	refusal(t, err, upload.ReasonInFlight, "STEWARD_UPLOADS_IN_FLIGHT")

	a1()
	a1() // twice is once: it must not free a place alice still holds
	if _, err := g.Admit(carol); err != nil {
		t.Fatalf("carol after alice released one: %v", err)
	}
	_, err = g.Admit(alice)
	refusal(t, err, upload.ReasonInFlight, "STEWARD_UPLOADS_IN_FLIGHT")
	a2()
	b1()
	if _, err := g.Admit(alice); err != nil {
		t.Errorf("alice after releases: %v", err)
	}
}

// TestGateDefaults: the zero Gate applies the documented defaults.
func TestGateDefaults(t *testing.T) {
	var g upload.Gate
	owner := uuid.New()
	for range upload.DefaultPerOwner {
		if _, err := g.Admit(owner); err != nil {
			t.Fatal(err)
		}
	}
	_, err := g.Admit(owner)
	refusal(t, err, upload.ReasonPerOwner, "STEWARD_UPLOADS_PER_OWNER")
	for range upload.DefaultInFlight - upload.DefaultPerOwner {
		if _, err := g.Admit(uuid.New()); err != nil {
			t.Fatal(err)
		}
	}
	_, err = g.Admit(uuid.New())
	refusal(t, err, upload.ReasonInFlight, "STEWARD_UPLOADS_IN_FLIGHT")
}

// spooled lists the spool files in dir.
func spooled(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "steward-upload-*"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestSpoolKeepsTheBodyOnDisk: a body is written to a temporary file whose size and bytes
// are the body's, read at any offset; Close removes it.
func TestSpoolKeepsTheBodyOnDisk(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	body := bytes.Repeat([]byte("receipt,12.50\n"), 1000)
	f, err := upload.Spool(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != int64(len(body)) || len(spooled(t, dir)) != 1 {
		t.Fatalf("size %d, files %q; want %d bytes in one file", f.Size(), spooled(t, dir), len(body))
	}
	got, err := io.ReadAll(io.NewSectionReader(f, 0, f.Size()))
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("read back %d bytes, %v; want the body", len(got), err)
	}
	tail := make([]byte, 5)
	if _, err := f.ReadAt(tail, f.Size()-5); err != nil || string(tail) != "2.50\n" {
		t.Errorf("the last 5 bytes = %q, %v", tail, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if left := spooled(t, dir); len(left) != 0 {
		t.Errorf("Close left %q", left)
	}
}

// TestSpoolLeavesNothingOnABadBody: a body past its limit (http.MaxBytesReader's error) or
// cut off is returned as the reader's own error, and no file is left behind.
func TestSpoolLeavesNothingOnABadBody(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	limited := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(strings.Repeat("x", 100))), 10)
	_, err := upload.Spool(limited)
	var tooBig *http.MaxBytesError
	if !errors.As(err, &tooBig) || tooBig.Limit != 10 {
		t.Errorf("a body over 10 bytes = %v; want the *http.MaxBytesError itself", err)
	}
	_, err = upload.Spool(io.MultiReader(strings.NewReader("half a bo"), iotest.ErrReader(io.ErrUnexpectedEOF)))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a body cut off = %v; want io.ErrUnexpectedEOF", err)
	}
	if left := spooled(t, dir); len(left) != 0 {
		t.Errorf("failed spools left %q", left)
	}
	t.Setenv("TMPDIR", filepath.Join(dir, "gone"))
	if _, err := upload.Spool(strings.NewReader("x")); err == nil || !strings.Contains(err.Error(), "spool an upload") {
		t.Errorf("no temporary directory = %v; want an error saying what failed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone")); !os.IsNotExist(err) {
		t.Errorf("the spool made its directory: %v", err)
	}
}
