package childproc_test

import (
	"testing"

	"github.com/stewardhq/steward/internal/childproc"
)

// TestOutOfMemory: each way a child's runtime says it ran out of the memory it is allowed is
// recognised ("cannot allocate memory" was missed by the document readers: a 500), and an
// ordinary failure is not.
func TestOutOfMemory(t *testing.T) {
	for stderr, want := range map[string]bool{
		"fatal error: runtime: out of memory\n":                       true,
		"fatal error: runtime: cannot allocate memory\n":              true,
		"unexpected signal during runtime execution\n[signal SIGSEGV": true,
		"==1==ERROR: ThreadSanitizer failed to allocate 0x1000 bytes": true,
		"panic: index out of range [3] with length 3\n":               false,
	} {
		if got := childproc.OutOfMemory([]byte(stderr)); got != want {
			t.Errorf("OutOfMemory(%q) = %v, want %v", stderr, got, want)
		}
	}
}
