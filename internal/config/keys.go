package config

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Keys is the deployment's own secret key, which seals what owners entrust to it.
type Keys struct {
	// SecretKey seals the secrets owners entrust (notification channels', mail accounts',
	// a brokerage's, MCP servers' tokens and passwords) with AES-GCM and keys approval links (STEWARD_SECRET_KEY: 32 bytes, standard base64 or hex;
	// on Lambda from SSM). Without it, a channel with a secret cannot be created, nor one
	// delivered to (fail closed).
	SecretKey []byte
	// SecretKeyParam holds STEWARD_SECRET_KEY (STEWARD_SECRET_KEY_SSM), decoded with DecodeKey.
	SecretKeyParam string
}

// keys reads the Keys area.
func (r *reader) keys() Keys {
	return Keys{SecretKey: r.key32("STEWARD_SECRET_KEY"), SecretKeyParam: r.str("STEWARD_SECRET_KEY_SSM", "")}
}

// key32 reads a 32-byte key in standard base64; empty is no key.
func (r *reader) key32(name string) []byte {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return nil
	}
	k, err := DecodeKey(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s %w", name, err))
		return nil
	}
	return k
}

// DecodeKey decodes STEWARD_SECRET_KEY: 32 bytes in standard base64, or in hex (64
// digits, as a deploy generates it). The error never quotes the value.
func DecodeKey(v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	if k, err := hex.DecodeString(v); err == nil && len(k) == 32 {
		return k, nil
	}
	k, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(k) != 32 {
		return nil, errors.New("must be 32 bytes in standard base64 or hex (e.g. openssl rand -base64 32)")
	}
	return k, nil
}
