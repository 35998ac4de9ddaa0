// Package upload receives the bodies of document and voice uploads (docs/ARCHITECTURE.md
// §12): a Gate bounds the uploads being received at once, per owner and per process, before
// any body is read, and Spool writes a body to a temporary file, so an upload that waits for
// a document reader holds no buffer of its size.
package upload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
)

// Defaults of Gate (STEWARD_UPLOADS_IN_FLIGHT, STEWARD_UPLOADS_PER_OWNER), and how long a
// refused upload is told to wait.
const (
	DefaultInFlight = 8
	DefaultPerOwner = 2
	RetryAfter      = 5 * time.Second
)

// Reasons of a Gate's refusals (rate_limited: 429 with Retry-After).
const (
	ReasonInFlight = "uploads_in_flight"
	ReasonPerOwner = "uploads_per_owner"
)

// Gate bounds the uploads being received at once: InFlight in the process, PerOwner for one
// owner (zero: the defaults). One past either is refused at once, before its body is read:
// a body is up to STEWARD_MAX_DOCUMENT_BYTES, so a burst of uploads could otherwise hold as
// many buffers. The zero value is ready to use; one Gate serves the API and the web app.
type Gate struct {
	InFlight, PerOwner int

	mu     sync.Mutex
	total  int
	owners map[uuid.UUID]int
}

// Admit takes a place for one of owner's uploads, or refuses it (rate_limited, naming the
// limit, with Retry-After); release gives the place back.
func (g *Gate) Admit(owner uuid.UUID) (release func(), err error) {
	inFlight, perOwner := or(g.InFlight, DefaultInFlight), or(g.PerOwner, DefaultPerOwner)
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.owners[owner] >= perOwner:
		return nil, refuse(ReasonPerOwner, "You are already uploading %d files, as many as one owner may at once (STEWARD_UPLOADS_PER_OWNER)", perOwner)
	case g.total >= inFlight:
		return nil, refuse(ReasonInFlight, "Steward is already receiving %d uploads, as many as it takes at once (STEWARD_UPLOADS_IN_FLIGHT)", inFlight)
	}
	if g.owners == nil {
		g.owners = map[uuid.UUID]int{}
	}
	g.total++
	g.owners[owner]++
	var once sync.Once
	return func() { once.Do(func() { g.release(owner) }) }, nil
}

func (g *Gate) release(owner uuid.UUID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total--
	if g.owners[owner]--; g.owners[owner] <= 0 {
		delete(g.owners, owner)
	}
}

func or(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

func refuse(reason, format string, a ...any) error {
	return &steward.Error{Code: steward.CodeRateLimited, Reason: reason, RetryAfter: RetryAfter,
		Message: fmt.Sprintf(format, a...) + fmt.Sprintf("; try again in %d seconds.", int(RetryAfter.Seconds()))}
}

// File is an upload's body in a temporary file (the system's: TMPDIR, /tmp on Lambda),
// removed by Close.
type File struct {
	f    *os.File
	size int64
}

// Spool copies r to a new temporary file. r's own error (a body past its limit:
// *http.MaxBytesError; one cut off) is returned as it is, and nothing is left behind.
func Spool(r io.Reader) (*File, error) {
	f, err := os.CreateTemp("", "steward-upload-*")
	if err != nil {
		return nil, fmt.Errorf("spool an upload: %w", err)
	}
	n, err := io.Copy(f, r)
	if err != nil {
		return nil, errors.Join(err, f.Close(), os.Remove(f.Name()))
	}
	return &File{f: f, size: n}, nil
}

// Size is how many bytes the file holds.
func (f *File) Size() int64 { return f.size }

// ReadAt reads the body from off (io.ReaderAt).
func (f *File) ReadAt(p []byte, off int64) (int, error) { return f.f.ReadAt(p, off) }

// Close closes and removes the file.
func (f *File) Close() error { return errors.Join(f.f.Close(), os.Remove(f.f.Name())) }
