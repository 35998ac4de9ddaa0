// Package secret seals the secrets owners give Steward (channel tokens and passwords, MCP
// server headers) at rest, under the deployment's STEWARD_SECRET_KEY.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// Sealer encrypts owners' secrets at rest with AES-256-GCM under the deployment's
// STEWARD_SECRET_KEY. A sealed secret is nonce‖ciphertext‖tag; the owner's id is the
// additional data, so a sealed secret copied to another owner's row does not open.
type Sealer struct {
	aead cipher.AEAD
}

// ErrNoKey is returned when a secret must be sealed or opened and no key is configured.
var ErrNoKey = errors.New("STEWARD_SECRET_KEY is not set: secrets cannot be sealed or opened")

// NewSealer returns a sealer for a 32-byte key; a nil or empty key gives a sealer that
// refuses every secret (ErrNoKey).
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) == 0 {
		return &Sealer{}, nil
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key: %d bytes, want 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// HasKey reports whether the sealer has a key (without one it refuses every secret).
func (s *Sealer) HasKey() bool { return s != nil && s.aead != nil }

// Seal encrypts plain for the owner ad.
func (s *Sealer) Seal(plain, ad []byte) ([]byte, error) {
	if s == nil || s.aead == nil {
		return nil, ErrNoKey
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, plain, ad), nil
}

// Open decrypts a sealed secret of the owner ad.
func (s *Sealer) Open(sealed, ad []byte) ([]byte, error) {
	if s == nil || s.aead == nil {
		return nil, ErrNoKey
	}
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, errors.New("sealed secret: too short")
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], ad)
	if err != nil {
		return nil, errors.New("sealed secret: does not open with this key")
	}
	return plain, nil
}
