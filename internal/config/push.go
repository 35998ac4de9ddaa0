package config

import (
	"bytes"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Push is the deployment's Web Push sender (RFC 8292): its key pair and the contact a push
// service may write to.
type Push struct {
	// VAPIDPublicKey and VAPIDPrivateKey are the deployment's Web Push key pair
	// (STEWARD_VAPID_PUBLIC_KEY: the uncompressed P-256 point, 65 bytes; STEWARD_VAPID_PRIVATE_KEY:
	// its 32-byte scalar, on Lambda from SSM; both unpadded base64url, as `steward vapid-keys`
	// prints them). A browser subscribes with the public key; each push is signed with the
	// private one (RFC 8292). Unset, Settings says push is not configured and no webpush
	// channel can be added.
	VAPIDPublicKey, VAPIDPrivateKey string
	// VAPIDPrivateKeyParam holds STEWARD_VAPID_PRIVATE_KEY (STEWARD_VAPID_PRIVATE_KEY_SSM),
	// checked against VAPIDPublicKey with CheckVAPID.
	VAPIDPrivateKeyParam string
	// VAPIDSubject is the contact a push service may write to about this sender
	// (STEWARD_VAPID_SUBJECT: mailto:you@example.com or an https URL; STEWARD_PUBLIC_URL when
	// unset).
	VAPIDSubject string
}

// push reads the Push area: a private key (its public key may be left out: it is derived), a
// public key only with its private one (which may come from SSM or Secrets Manager, checked
// there), a pair that belongs together, and a subject to sign with, by default web's public
// URL.
func (r *reader) push(web Web) Push {
	p := Push{
		VAPIDPublicKey:       r.str("STEWARD_VAPID_PUBLIC_KEY", ""),
		VAPIDPrivateKey:      r.str("STEWARD_VAPID_PRIVATE_KEY", ""),
		VAPIDPrivateKeyParam: r.str("STEWARD_VAPID_PRIVATE_KEY_SSM", ""),
		VAPIDSubject:         r.str("STEWARD_VAPID_SUBJECT", ""),
	}
	private := p.VAPIDPrivateKey != "" || p.VAPIDPrivateKeyParam != ""
	switch {
	case p.VAPIDPublicKey == "" && !private:
		return p
	case !private:
		r.fail("STEWARD_VAPID_PUBLIC_KEY", p.VAPIDPublicKey, "needs STEWARD_VAPID_PRIVATE_KEY, its private key (steward vapid-keys prints a pair)")
		return p
	case p.VAPIDPrivateKey != "":
		pub, priv, err := VAPIDKeys(p.VAPIDPublicKey, p.VAPIDPrivateKey)
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("STEWARD_VAPID_PUBLIC_KEY, STEWARD_VAPID_PRIVATE_KEY: %w", err))
		}
		p.VAPIDPublicKey, p.VAPIDPrivateKey = pub, priv
	}
	if p.VAPIDSubject == "" {
		p.VAPIDSubject = web.PublicURL
	}
	if p.VAPIDSubject == "" && web.PublicURLParam != "" {
		return p // WithPublicURL checks the subject once the public URL is read
	}
	if err := checkSubject(p.VAPIDSubject, web.PublicURL); err != nil {
		r.errs = append(r.errs, err)
	}
	return p
}

// checkSubject checks the VAPID subject, which defaults to the public URL.
func checkSubject(subject, publicURL string) error {
	switch {
	case subject == "":
		return errors.New(`STEWARD_VAPID_SUBJECT="" is needed with the VAPID keys (or STEWARD_PUBLIC_URL): mailto:you@example.com or an https URL, where a push service can reach the sender`)
	case !strings.HasPrefix(subject, "mailto:") && !strings.HasPrefix(subject, "https://"):
		if subject == publicURL {
			return errors.New(`STEWARD_VAPID_SUBJECT="" is needed with the VAPID keys when STEWARD_PUBLIC_URL is not https: mailto:you@example.com or an https URL`)
		}
		return fmt.Errorf("STEWARD_VAPID_SUBJECT=%q must be mailto:you@example.com or an https URL", subject)
	}
	return nil
}

// CheckVAPID checks a Web Push key pair: the public key an uncompressed P-256 point (65
// bytes), the private key its 32-byte scalar, both base64url (padded or not), and the public
// key the private key's. The error never quotes the private key.
func CheckVAPID(public, private string) error {
	if public == "" {
		return errors.New("the public key is missing (steward vapid-keys prints a pair)")
	}
	_, _, err := VAPIDKeys(public, private)
	return err
}

// VAPIDKeys checks a Web Push private key — its 32-byte P-256 scalar in base64url (padded or
// not, as steward vapid-keys prints it) or in hex (64 digits, as a deploy generates it) — and
// returns it in unpadded base64url with its public key: public, which must then belong to
// it, or when public is empty the one derived from it. The error never quotes the private key.
func VAPIDKeys(public, private string) (pub, priv string, err error) {
	private = strings.TrimSpace(private)
	raw, err := hex.DecodeString(private)
	if err != nil || len(private) != 64 {
		raw, err = decodeB64URL(private)
	}
	if err != nil || len(raw) != 32 {
		return "", "", errors.New("the private key is not a P-256 private key in base64url or hex (32 bytes; steward vapid-keys prints a pair)")
	}
	k, err := ecdh.P256().NewPrivateKey(raw)
	if err != nil {
		return "", "", errors.New("the private key is not a P-256 scalar (zero, or not below the group order): generate another")
	}
	derived := k.PublicKey().Bytes()
	if public != "" {
		p, err := decodeB64URL(public)
		if err != nil || len(p) != 65 || p[0] != 4 {
			return "", "", errors.New("the public key is not an uncompressed P-256 point in base64url (65 bytes; steward vapid-keys prints a pair)")
		}
		if !bytes.Equal(p, derived) {
			return "", "", errors.New("the private key does not belong to the public key")
		}
	}
	return base64.RawURLEncoding.EncodeToString(derived), base64.RawURLEncoding.EncodeToString(raw), nil
}

// decodeB64URL decodes base64url with or without padding.
func decodeB64URL(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(strings.TrimSpace(s), "="))
}
