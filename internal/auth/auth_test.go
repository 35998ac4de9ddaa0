package auth

import (
	"encoding/hex"
	"strings"
	"testing"
)

// TestStoredFormUnchanged: the hash of a key is its SHA-256, as stored before this package
// existed, so keys issued earlier keep working.
func TestStoredFormUnchanged(t *testing.T) {
	t.Parallel()
	// printf 'stw_abc' | sha256sum
	if got, want := hex.EncodeToString(Hash("stw_abc")), "8f5d9d535ee174d785c7ba0dddded8c003ccaa5c9f689a17d1585e2e587d4b5f"; got != want {
		t.Fatalf("Hash = %s, want SHA-256 %s", got, want)
	}
}

func TestNewKey(t *testing.T) {
	t.Parallel()
	a, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewKey()
	if a == b || !strings.HasPrefix(a, Prefix) || len(a) != len(Prefix)+43 || !Plausible(a) {
		t.Fatalf("keys %q, %q", a, b)
	}
	if Display(a) != a[:10] {
		t.Fatalf("display %q", Display(a))
	}
	if Plausible("sk_"+a[4:]) || Plausible(a+strings.Repeat("x", 200)) {
		t.Fatal("implausible key accepted")
	}
}
