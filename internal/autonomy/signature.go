package autonomy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// Standard Webhooks (https://www.standardwebhooks.com): the sender signs
// "<webhook-id>.<webhook-timestamp>.<raw body>" with HMAC-SHA256 under the endpoint's secret
// and sends webhook-id, webhook-timestamp (Unix seconds) and webhook-signature, a
// space-separated list of "v1,<base64 MAC>" (several during a secret rotation).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"

	// SecretPrefix starts every webhook secret.
	SecretPrefix = "whsec_"
	// DefaultTolerance is how far a delivery's timestamp may be from now.
	DefaultTolerance = 5 * time.Minute
	// maxSignatures bounds the signatures tried per delivery.
	maxSignatures = 10
	// maxMessageID bounds a webhook-id.
	maxMessageID = 256
)

// Reasons carried by webhook refusals (steward.Error.Reason), for logs and clients.
const (
	ReasonMissingHeaders = "missing_headers"
	ReasonStaleTimestamp = "stale_timestamp"
	ReasonBadSignature   = "bad_signature"
	ReasonUnknownHook    = "unknown_hook"
	ReasonTooLarge       = "too_large"
)

// NewSecret mints a webhook secret: "whsec_" and 32 random bytes in standard base64.
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:]), nil
}

// secretKey is the HMAC key of a secret: the bytes its base64 part encodes.
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("malformed webhook secret")
	}
	return key, nil
}

// Sign returns the webhook-signature value ("v1,<base64>") for a delivery: what a sender
// computes, and what tests use.
func Sign(secret, msgID, timestamp string, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, msgID, timestamp, body)), nil
}

// mac is HMAC-SHA256(key, "id.timestamp.body").
func mac(key []byte, msgID, timestamp string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msgID))
	h.Write([]byte{'.'})
	h.Write([]byte(timestamp))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// ParseSignatures returns the v1 MACs of a webhook-signature header: space-separated
// "version,base64" entries. Other versions and malformed entries are ignored; at most
// maxSignatures are returned.
func ParseSignatures(header string) [][]byte {
	var out [][]byte
	for _, entry := range strings.Fields(header) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		b, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err != nil || len(b) != sha256.Size {
			continue
		}
		out = append(out, b)
		if len(out) == maxSignatures {
			break
		}
	}
	return out
}

// Verify checks a delivery's Standard Webhooks headers against the raw body, before anything
// parses it: the three headers are present, the timestamp is within tolerance of now, and
// one of the v1 signatures is the MAC (compared in constant time). It returns the
// webhook-id; every failure is a *steward.Error with CodeUnauthorized and a reason.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) (string, error) {
	msgID, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if msgID == "" || ts == "" || sigs == "" {
		return "", steward.Refusef(steward.CodeUnauthorized, ReasonMissingHeaders, "webhook-id, webhook-timestamp and webhook-signature are required")
	}
	if len(msgID) > maxMessageID || !printable(msgID) {
		return "", steward.Refusef(steward.CodeUnauthorized, ReasonMissingHeaders, "webhook-id must be 1 to %d printable ASCII characters", maxMessageID)
	}
	sec, err := parseTimestamp(ts)
	if err != nil {
		return "", steward.Refusef(steward.CodeUnauthorized, ReasonStaleTimestamp, "webhook-timestamp must be Unix seconds")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return "", steward.Refusef(steward.CodeUnauthorized, ReasonStaleTimestamp, "webhook-timestamp is more than %s away from now", tolerance)
	}
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	want := mac(key, msgID, ts, body)
	for _, got := range ParseSignatures(sigs) {
		if hmac.Equal(got, want) {
			return msgID, nil
		}
	}
	return "", steward.Refusef(steward.CodeUnauthorized, ReasonBadSignature, "no valid v1 signature")
}

// parseTimestamp reads Unix seconds: 1 to 12 digits, nothing else.
func parseTimestamp(s string) (int64, error) {
	if len(s) == 0 || len(s) > 12 {
		return 0, fmt.Errorf("bad timestamp")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad timestamp")
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// printable reports whether s is visible ASCII (no spaces or controls).
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
