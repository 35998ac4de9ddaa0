package secret_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/secret"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func sealer(t *testing.T, k []byte) *secret.Sealer {
	t.Helper()
	s, err := secret.NewSealer(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSealOpens: a sealed secret opens, under the same key and owner, to what was sealed —
// the empty secret too — and sealing twice gives two different ciphertexts (a fresh nonce each
// time), neither of which shows the plain text.
func TestSealOpens(t *testing.T) {
	s := sealer(t, key(7))
	owner := []byte("owner-a")
	for _, plain := range [][]byte{[]byte("telegram-bot-token:123"), {}, bytes.Repeat([]byte("x"), 10_000)} {
		sealed, err := s.Seal(plain, owner)
		if err != nil {
			t.Fatal(err)
		}
		if len(plain) > 4 && bytes.Contains(sealed, plain[:5]) {
			t.Errorf("the sealed secret shows its plain text %q", plain[:5])
		}
		got, err := s.Open(sealed, owner)
		if err != nil {
			t.Fatalf("open of a %d-byte secret: %v", len(plain), err)
		}
		if !bytes.Equal(got, plain) {
			t.Errorf("opened %q; want %q", got, plain)
		}
	}
	a, _ := s.Seal([]byte("same"), owner)
	b, _ := s.Seal([]byte("same"), owner)
	if bytes.Equal(a, b) {
		t.Error("sealing the same secret twice gave the same bytes: the nonce is not fresh")
	}
}

// TestOpenRefuses: a secret does not open with another key, for another owner (copied to
// another row), when any byte was changed, or when truncated — each a clear error, not a
// panic and not wrong plain text.
func TestOpenRefuses(t *testing.T) {
	s := sealer(t, key(7))
	owner := []byte("owner-a")
	sealed, err := s.Seal([]byte("imap-password"), owner)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		by     *secret.Sealer
		sealed []byte
		ad     []byte
		want   string
	}{
		"another key":   {sealer(t, key(8)), sealed, owner, "does not open with this key"},
		"another owner": {s, sealed, []byte("owner-b"), "does not open with this key"},
		"no owner":      {s, sealed, nil, "does not open with this key"},
		"too short":     {s, sealed[:10], owner, "too short"},
		"empty":         {s, nil, owner, "too short"},
	}
	for name, c := range cases {
		plain, err := c.by.Open(c.sealed, c.ad)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: open = %q, %v; want an error saying %q", name, plain, err, c.want)
		}
		if plain != nil {
			t.Errorf("%s: open returned plain text %q with its error", name, plain)
		}
	}
	// Every byte counts: the nonce, the ciphertext and the tag.
	for i := range sealed {
		tampered := bytes.Clone(sealed)
		tampered[i] ^= 0x01
		if plain, err := s.Open(tampered, owner); err == nil || plain != nil {
			t.Errorf("byte %d of %d flipped: open = %q, %v; want refused", i, len(sealed), plain, err)
		}
	}
}

// TestNoKeyRefusesEverySecret: without STEWARD_SECRET_KEY the sealer exists (the deployment
// starts) but seals and opens nothing, saying which variable is missing; a key of the wrong
// length is refused when the sealer is made.
func TestNoKeyRefusesEverySecret(t *testing.T) {
	for _, s := range []*secret.Sealer{sealer(t, nil), sealer(t, []byte{}), nil} {
		if s.HasKey() {
			t.Error("a sealer without a key says it has one")
		}
		if _, err := s.Seal([]byte("x"), []byte("o")); !errors.Is(err, secret.ErrNoKey) {
			t.Errorf("seal without a key = %v; want ErrNoKey", err)
		}
		if _, err := s.Open(make([]byte, 64), []byte("o")); !errors.Is(err, secret.ErrNoKey) {
			t.Errorf("open without a key = %v; want ErrNoKey", err)
		}
	}
	if !strings.Contains(secret.ErrNoKey.Error(), "STEWARD_SECRET_KEY") {
		t.Errorf("ErrNoKey = %q; want it to name STEWARD_SECRET_KEY", secret.ErrNoKey)
	}
	if !sealer(t, key(1)).HasKey() {
		t.Error("a sealer with a 32-byte key says it has none")
	}
	for _, n := range []int{1, 16, 24, 31, 33, 64} {
		if s, err := secret.NewSealer(make([]byte, n)); err == nil || !strings.Contains(err.Error(), "want 32") {
			t.Errorf("a %d-byte key: sealer %v, error %v; want refused as not 32 bytes", n, s, err)
		}
	}
}
