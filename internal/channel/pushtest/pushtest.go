// Package pushtest is a fake Web Push service for tests: a TLS server on 127.0.0.1 (its
// certificate names example.com, egresstest's) that takes a push only with a valid VAPID
// signature (RFC 8292) of the expected key, and decrypts it (RFC 8291, aes128gcm) with the
// private key of the browser the endpoint was made for. Only tests import it.
package pushtest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/egress/egresstest"
)

// VAPIDKeys is a fresh VAPID key pair (public, private), as `steward vapid-keys` makes one.
func VAPIDKeys(t testing.TB) (public, private string) {
	t.Helper()
	private, public, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	return public, private
}

// Browser is a browser's side of a subscription: its P-256 key pair and auth secret, made
// here as a browser makes them.
type Browser struct {
	key  *ecdh.PrivateKey
	auth []byte
}

// NewBrowser makes a browser's key pair and auth secret.
func NewBrowser(t testing.TB) *Browser {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{key: k, auth: make([]byte, 16)}
	_, _ = rand.Read(b.auth)
	return b
}

// Subscription is the browser's PushSubscription for endpoint, as toJSON() gives it.
func (b *Browser) Subscription(endpoint string) *channel.Subscription {
	s := &channel.Subscription{Endpoint: endpoint}
	s.Keys.P256dh = base64.RawURLEncoding.EncodeToString(b.key.PublicKey().Bytes())
	s.Keys.Auth = base64.RawURLEncoding.EncodeToString(b.auth)
	return s
}

// Decrypt opens an aes128gcm body (RFC 8188) encrypted for the browser (RFC 8291 §3.4):
// salt, record size, the sender's ephemeral public key, then one record ending in 0x02.
func (b *Browser) Decrypt(body []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("body shorter than the aes128gcm header")
	}
	salt, rs, idLen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if len(body) < 21+idLen || idLen != 65 {
		return nil, fmt.Errorf("key id of %d bytes, want the sender's 65-byte public key", idLen)
	}
	senderPub, record := body[21:21+idLen], body[21+idLen:]
	if uint32(len(record)) > rs {
		return nil, fmt.Errorf("a record of %d bytes, over the record size %d (one record expected)", len(record), rs)
	}
	pub, err := ecdh.P256().NewPublicKey(senderPub)
	if err != nil {
		return nil, fmt.Errorf("sender key: %w", err)
	}
	shared, err := b.key.ECDH(pub)
	if err != nil {
		return nil, err
	}
	info := append(append([]byte("WebPush: info\x00"), b.key.PublicKey().Bytes()...), senderPub...)
	ikm, err := hkdf.Key(sha256.New, shared, b.auth, string(info), 32)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		return nil, fmt.Errorf("decrypt: %w", err)
	}
	end := len(plain) - 1
	for end >= 0 && plain[end] == 0 {
		end--
	}
	if end < 0 || plain[end] != 2 {
		return nil, errors.New("the record does not end with the last-record delimiter 0x02")
	}
	return plain[:end], nil
}

// Push is one push the service took: its headers and the payload decrypted.
type Push struct {
	Endpoint string
	Header   http.Header
	Payload  channel.PushPayload
	Raw      []byte
}

// Service is the fake push service.
type Service struct {
	*egresstest.Server
	vapid string

	mu       sync.Mutex
	browsers map[string]*Browser
	pushes   []Push
	refused  []string
	status   int
}

// NewService starts a push service that takes pushes signed with the VAPID public key vapid.
func NewService(t testing.TB, vapid string) *Service {
	s := &Service{vapid: vapid, browsers: map[string]*Browser{}, status: http.StatusCreated}
	s.Server = egresstest.NewTLSServer(t, s.serve)
	return s
}

// Endpoint registers b and returns its endpoint on the service.
func (s *Service) Endpoint(b *Browser) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := rand.Text()
	s.browsers["/push/"+id] = b
	return s.origin() + "/push/" + id
}

// Answer makes the service answer status to every valid push from now on (201 by default;
// 410 when the subscription is gone).
func (s *Service) Answer(status int) { s.mu.Lock(); s.status = status; s.mu.Unlock() }

// Pushes are the pushes taken, in order.
func (s *Service) Pushes() []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Push(nil), s.pushes...)
}

// Refused are the reasons of the requests refused (a bad signature, a bad body).
func (s *Service) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refused...)
}

func (s *Service) origin() string {
	return fmt.Sprintf("https://example.com:%d", s.Addr().Port())
}

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<10))
	s.mu.Lock()
	defer s.mu.Unlock()
	refuse := func(status int, format string, args ...any) {
		s.refused = append(s.refused, fmt.Sprintf(format, args...))
		w.WriteHeader(status)
	}
	b, ok := s.browsers[r.URL.Path]
	switch {
	case r.Method != http.MethodPost:
		refuse(http.StatusMethodNotAllowed, "%s, not POST", r.Method)
		return
	case !ok:
		refuse(http.StatusNotFound, "no subscription at %s", r.URL.Path)
		return
	case r.Header.Get("Content-Encoding") != "aes128gcm":
		refuse(http.StatusBadRequest, "Content-Encoding %q, want aes128gcm", r.Header.Get("Content-Encoding"))
		return
	case r.Header.Get("TTL") == "":
		refuse(http.StatusBadRequest, "no TTL header")
		return
	}
	if err := s.checkVAPID(r.Header.Get("Authorization")); err != nil {
		refuse(http.StatusUnauthorized, "VAPID: %v", err)
		return
	}
	plain, err := b.Decrypt(body)
	if err != nil {
		refuse(http.StatusBadRequest, "%v", err)
		return
	}
	p := Push{Endpoint: s.origin() + r.URL.Path, Header: r.Header.Clone(), Raw: plain}
	if err := json.Unmarshal(plain, &p.Payload); err != nil {
		refuse(http.StatusBadRequest, "payload is not JSON: %v", err)
		return
	}
	if s.status < 300 {
		s.pushes = append(s.pushes, p)
	}
	w.WriteHeader(s.status)
}

// checkVAPID checks "vapid t=<JWT>, k=<key>" (RFC 8292 §3): the key is the expected one, the
// JWT is ES256-signed by it, for this service's origin, not expired, with a contact.
func (s *Service) checkVAPID(h string) error {
	rest, ok := strings.CutPrefix(h, "vapid ")
	if !ok {
		return fmt.Errorf("authorization %q is not the vapid scheme", h)
	}
	params := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		params[k] = v
	}
	token, key := params["t"], params["k"]
	if key != s.vapid {
		return fmt.Errorf("k=%q, want the server's public key %q", key, s.vapid)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return errors.New("t is not a JWT")
	}
	var head struct{ Alg, Typ string }
	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	for i, dst := range []any{&head, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || json.Unmarshal(raw, dst) != nil {
			return fmt.Errorf("JWT part %d does not decode", i)
		}
	}
	if head.Alg != "ES256" {
		return fmt.Errorf("alg %q, want ES256", head.Alg)
	}
	if err := verifyES256(parts, key); err != nil {
		return err
	}
	now := time.Now()
	switch {
	case claims.Aud != s.origin():
		return fmt.Errorf("aud %q, want this service's origin %q", claims.Aud, s.origin())
	case claims.Exp <= now.Unix() || claims.Exp > now.Add(24*time.Hour).Unix():
		return fmt.Errorf("exp %d is not within the next 24 hours", claims.Exp)
	case !strings.HasPrefix(claims.Sub, "mailto:") && !strings.HasPrefix(claims.Sub, "https://"):
		return fmt.Errorf("sub %q is not a mailto: or https: contact", claims.Sub)
	case strings.HasPrefix(claims.Sub, "mailto:mailto:"):
		return fmt.Errorf("sub %q has mailto: twice", claims.Sub)
	}
	return nil
}

// verifyES256 verifies the signature of the JWT in parts with the base64url P-256 key.
func verifyES256(parts []string, key string) error {
	raw, _ := base64.RawURLEncoding.DecodeString(key)
	pub, perr := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if perr != nil || err != nil || len(sig) != 64 {
		return errors.New("the key or the signature is malformed")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return errors.New("the JWT's signature does not verify with k")
	}
	return nil
}
