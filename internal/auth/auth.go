// Package auth mints and hashes Steward API keys. The store keeps only a key's hash and its
// display prefix; the door looks keys up by hash (docs/ARCHITECTURE.md §1, §5).
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
)

// Prefix starts every Steward API key, so leaked keys are easy to recognise and redact.
const Prefix = "stw_"

// maxKeyLen bounds what Plausible accepts, so a huge header is never hashed.
const maxKeyLen = 200

// NewKey mints a random key (256 random bits, URL-safe base64 after the prefix).
func NewKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random key: %w", err)
	}
	return Prefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Hash is the stored form of a key. Keys carry 256 random bits, so a fast hash suffices.
func Hash(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// Display is the part of a key shown in listings: the prefix and six characters.
func Display(key string) string {
	return key[:min(len(key), len(Prefix)+6)]
}

// Plausible reports whether key has the form of a Steward key worth looking up.
func Plausible(key string) bool {
	return strings.HasPrefix(key, Prefix) && len(key) <= maxKeyLen
}
