package passkeys_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/passkeys"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

const (
	rpID   = "localhost"
	origin = "http://localhost:8080"
)

var b64 = base64.RawURLEncoding

// authenticator is a software passkey: a P-256 key, a credential id and a signature
// counter, answering ceremonies the way a browser hands an authenticator's answer to a
// relying party (none attestation).
type authenticator struct {
	key     *ecdsa.PrivateKey
	id      []byte
	counter uint32
	// origin is the page's origin the browser puts in the client data.
	origin string
}

func newAuthenticator(t *testing.T) *authenticator {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	return &authenticator{key: k, id: id, origin: origin}
}

// options reads a ceremony's challenge (and the user handle of a registration).
func options(t *testing.T, c passkeys.Ceremony) (challenge string, user []byte) {
	t.Helper()
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			User      struct {
				ID string `json:"id"`
			} `json:"user"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(c.Options, &o); err != nil || o.PublicKey.Challenge == "" {
		t.Fatalf("options %s: %v", c.Options, err)
	}
	user, _ = b64.DecodeString(o.PublicKey.User.ID)
	return o.PublicKey.Challenge, user
}

func (a *authenticator) clientData(kind, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": kind, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	return b
}

// authData is the authenticator data: the RP ID's hash, flags (user present and verified),
// the counter, and extra (the attested credential data of a registration).
func (a *authenticator) authData(flags byte, extra []byte) []byte {
	h := sha256.Sum256([]byte(rpID))
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, a.counter)
	return append(out, extra...)
}

// create answers a registration ceremony.
func (a *authenticator) create(t *testing.T, c passkeys.Ceremony) []byte {
	t.Helper()
	challenge, _ := options(t, c)
	// The uncompressed point is 0x04 ‖ X ‖ Y, 32 bytes each on P-256.
	point, err := a.key.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	cose, err := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: point[1:33], -3: point[33:65]})
	if err != nil {
		t.Fatal(err)
	}
	att := make([]byte, 16) // AAGUID
	att = binary.BigEndian.AppendUint16(att, uint16(len(a.id)))
	att = append(append(att, a.id...), cose...)
	obj, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(0x45, att)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response":               map[string]any{"clientDataJSON": b64.EncodeToString(a.clientData("webauthn.create", challenge)), "attestationObject": b64.EncodeToString(obj), "transports": []string{"internal"}},
		"clientExtensionResults": map[string]any{}})
	return b
}

// get answers a sign-in ceremony as the passkey of user, its counter at counter.
func (a *authenticator) get(t *testing.T, c passkeys.Ceremony, user uuid.UUID, counter uint32) []byte {
	t.Helper()
	challenge, _ := options(t, c)
	a.counter = counter
	cd := a.clientData("webauthn.get", challenge)
	ad := a.authData(0x05, nil)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(ad),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(user[:])},
		"clientExtensionResults": map[string]any{}})
	return b
}

// clock is a test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is the service on a fresh database (the runtime's door) with alice, who has
// registered one passkey (her authenticator, counter 0).
type fixture struct {
	svc   *passkeys.Service
	door  *store.Door
	clock *clock
	alice store.Owner
	auth  *authenticator
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	o := testdb.Open(t, 4)
	alice, _ := o.Owner(t, "alice")
	door, err := store.OpenDoor(context.Background(), o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	clk := &clock{t: time.Now()}
	f := fixture{svc: &passkeys.Service{Store: o.Store, Door: door, RPID: rpID, Origin: origin, Now: clk.now}, door: door, clock: clk,
		alice: alice, auth: newAuthenticator(t)}
	f.register(t, f.auth, "my phone")
	return f
}

func (f fixture) register(t *testing.T, a *authenticator, name string) store.Passkey {
	t.Helper()
	ctx := context.Background()
	c, err := f.svc.BeginRegistration(ctx, f.alice.ID, f.alice.Name)
	if err != nil {
		t.Fatal(err)
	}
	if _, user := options(t, c); string(user) != string(f.alice.ID[:]) {
		t.Fatalf("the user handle is %x, want alice's id", user)
	}
	pk, err := f.svc.FinishRegistration(ctx, f.alice.ID, f.alice.Name, c.Secret, name, a.create(t, c))
	if err != nil {
		t.Fatalf("register %q: %v", name, err)
	}
	return pk
}

// signIn runs a whole sign-in with a at counter.
func (f fixture) signIn(t *testing.T, a *authenticator, counter uint32) (passkeys.SignedIn, error) {
	t.Helper()
	c, err := f.svc.BeginSignIn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return f.svc.FinishSignIn(context.Background(), c.Secret, a.get(t, c, f.alice.ID, counter), "test browser", time.Hour)
}

// refusedWith fails unless err is a steward.Error whose words contain want.
func refusedWith(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || steward.ErrorCode(err) == steward.CodeInternal || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: err = %v; want a refusal saying %q", what, err, want)
	}
}

// TestPasskeySignIn: a registered passkey signs its owner in — a live web session of theirs,
// the passkey's last use and counter recorded.
func TestPasskeySignIn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	in, err := f.signIn(t, f.auth, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.door.LookupSession(ctx, in.Secret)
	if err != nil || p.OwnerID != f.alice.ID || in.OwnerID != f.alice.ID {
		t.Fatalf("the session signs in %+v (%v); want alice", p, err)
	}
	keys, err := f.svc.List(ctx, f.alice.ID)
	if err != nil || len(keys) != 1 || keys[0].Name != "my phone" || keys[0].SignCount != 1 || keys[0].LastUsedAt == nil {
		t.Fatalf("alice's passkeys: %+v, %v", keys, err)
	}
	// The same authenticator again is refused (excluded at begin, a conflict at finish).
	c, err := f.svc.BeginRegistration(ctx, f.alice.ID, f.alice.Name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.FinishRegistration(ctx, f.alice.ID, f.alice.Name, c.Secret, "again", f.auth.create(t, c))
	refusedWith(t, "registering the same passkey twice", err, "already registered")
	// Removed, it signs nobody in.
	if err := f.svc.Remove(ctx, f.alice.ID, keys[0].ID); err != nil {
		t.Fatal(err)
	}
	_, err = f.signIn(t, f.auth, 2)
	refusedWith(t, "a removed passkey", err, "not registered with Steward")
}

// TestPasskeyChallengeIsSingleUse: a ceremony finishes once, whatever the answer; the second
// finish is refused in words and starts no session.
func TestPasskeyChallengeIsSingleUse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	c, err := f.svc.BeginSignIn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answer := f.auth.get(t, c, f.alice.ID, 1)
	if _, err := f.svc.FinishSignIn(ctx, c.Secret, answer, "ua", time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.FinishSignIn(ctx, c.Secret, answer, "ua", time.Hour)
	refusedWith(t, "the same sign-in finished twice", err, "expired or was already used")
	// A registration ceremony too, and a sign-in's secret does not finish a registration.
	r, err := f.svc.BeginRegistration(ctx, f.alice.ID, f.alice.Name)
	if err != nil {
		t.Fatal(err)
	}
	other := newAuthenticator(t)
	reg := other.create(t, r)
	s, err := f.svc.BeginSignIn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.FinishRegistration(ctx, f.alice.ID, f.alice.Name, s.Secret, "laptop", reg)
	refusedWith(t, "a sign-in's secret finishing a registration", err, "expired or was already used")
	if _, err := f.svc.FinishRegistration(ctx, f.alice.ID, f.alice.Name, r.Secret, "laptop", reg); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.FinishRegistration(ctx, f.alice.ID, f.alice.Name, r.Secret, "laptop", reg)
	refusedWith(t, "the same registration finished twice", err, "expired or was already used")
}

// TestPasskeyChallengeExpires: a ceremony older than CeremonyTTL is refused, on the
// service's clock.
func TestPasskeyChallengeExpires(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	c, err := f.svc.BeginSignIn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answer := f.auth.get(t, c, f.alice.ID, 1)
	f.clock.add(passkeys.CeremonyTTL + time.Second)
	_, err = f.svc.FinishSignIn(ctx, c.Secret, answer, "ua", time.Hour)
	refusedWith(t, "an expired sign-in", err, "expired or was already used")
}

// TestPasskeySignCount: the signature counter must move forward; a passkey whose counter
// stays or goes back (a copied authenticator, a replayed assertion) is refused in words,
// and the stored counter does not move.
func TestPasskeySignCount(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := f.signIn(t, f.auth, 5); err != nil {
		t.Fatal(err)
	}
	for _, n := range []uint32{5, 3, 0} {
		_, err := f.signIn(t, f.auth, n)
		refusedWith(t, "counter 5 then "+string(rune('0'+n)), err, "signature counter went backwards")
	}
	keys, err := f.svc.List(context.Background(), f.alice.ID)
	if err != nil || keys[0].SignCount != 5 {
		t.Fatalf("stored counter after refusals: %+v, %v; want 5", keys, err)
	}
	if _, err := f.signIn(t, f.auth, 6); err != nil {
		t.Fatalf("counter 6 after 5: %v", err)
	}
}

// TestPasskeyRefusals: an unknown credential, a forged signature, another origin and
// another owner's ceremony are refused in words; none signs anyone in.
func TestPasskeyRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.signIn(t, newAuthenticator(t), 1)
	refusedWith(t, "an unknown passkey", err, "not registered with Steward")

	forged := newAuthenticator(t)
	forged.id = f.auth.id // alice's credential id, another key
	_, err = f.signIn(t, forged, 1)
	refusedWith(t, "a forged signature", err, "could not be verified")

	elsewhere := *f.auth
	elsewhere.origin = "https://attacker.example"
	_, err = f.signIn(t, &elsewhere, 1)
	refusedWith(t, "an answer made for another site", err, "could not be verified")

	_, err = f.svc.FinishSignIn(ctx, "", []byte(`{}`), "ua", time.Hour)
	refusedWith(t, "no ceremony", err, "expired or was already used")
	c, err := f.svc.BeginSignIn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.FinishSignIn(ctx, c.Secret, []byte(`{"id": 7}`), "ua", time.Hour)
	refusedWith(t, "an answer that is not a credential", err, "could not be read")

	// Bob's registration ceremony does not register a passkey for alice.
	bob := store.Owner{ID: uuid.New(), Name: "bob"}
	r, err := f.svc.BeginRegistration(ctx, f.alice.ID, f.alice.Name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.FinishRegistration(ctx, bob.ID, bob.Name, r.Secret, "bob's", newAuthenticator(t).create(t, r))
	refusedWith(t, "alice's ceremony finished as bob", err, "expired or was already used")

	_, err = f.svc.FinishRegistration(ctx, f.alice.ID, f.alice.Name, "x", "\u202eevil", nil)
	refusedWith(t, "a name with a bidirectional override", err, "name")

	off := &passkeys.Service{Store: f.svc.Store, Door: f.door}
	_, err = off.BeginSignIn(ctx)
	refusedWith(t, "passkeys off", err, "Passkeys are off")
}
