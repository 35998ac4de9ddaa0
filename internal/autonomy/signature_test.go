package autonomy_test

import (
	"bytes"
	"crypto/sha256"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/autonomy"
)

// The Standard Webhooks specification's test vector.
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = "1614265330"
	specBody      = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesTheSpecification(t *testing.T) {
	t.Parallel()
	sig, err := autonomy.Sign(specSecret, specID, specTimestamp, []byte(specBody))
	if err != nil || sig != specSignature {
		t.Fatalf("Sign = %q, %v; want %q", sig, err, specSignature)
	}
	h := http.Header{}
	h.Set("webhook-id", specID)
	h.Set("webhook-timestamp", specTimestamp)
	h.Set("webhook-signature", "v1,bm90IHRoaXMgb25l "+specSignature)
	at := time.Unix(1614265330, 0).Add(4 * time.Minute)
	if id, err := autonomy.Verify(specSecret, h, []byte(specBody), at, autonomy.DefaultTolerance); err != nil || id != specID {
		t.Fatalf("Verify = %q, %v", id, err)
	}
	if _, err := autonomy.Verify(specSecret, h, []byte(specBody), at.Add(2*time.Minute), autonomy.DefaultTolerance); err == nil {
		t.Fatal("Verify accepted a delivery older than five minutes")
	}
}

func TestParseSignatures(t *testing.T) {
	t.Parallel()
	mac := bytes.Repeat([]byte{7}, sha256.Size)
	good := "v1,BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="
	for _, tc := range []struct {
		header string
		want   int
	}{
		{good, 1},
		{good + " " + good, 2},
		{"  " + good + "\t", 1},
		{"v1a," + good[3:], 0},
		{"v2," + good[3:], 0},
		{"v1," + good[3:len(good)-4], 0}, // wrong length
		{"v1,!!!", 0},
		{"v1", 0},
		{"", 0},
		{",", 0},
		{strings.Repeat(good+" ", 50), 10},
	} {
		sigs := autonomy.ParseSignatures(tc.header)
		if len(sigs) != tc.want {
			t.Errorf("ParseSignatures(%.40q) = %d signatures, want %d", tc.header, len(sigs), tc.want)
		}
		for _, s := range sigs {
			if !bytes.Equal(s, mac) {
				t.Errorf("ParseSignatures(%.40q) = %x", tc.header, s)
			}
		}
	}
}

// FuzzParseSignatures: the parser of the outside webhook-signature header never panics,
// returns only well-formed MACs, and always finds a signature Sign made, wherever it sits.
func FuzzParseSignatures(f *testing.F) {
	for _, s := range []string{specSignature, "v1,abc v1a,def", "", " ", "v1,", "v1,=", strings.Repeat("v1,AAAA ", 20), "v1,\x00\xff"} {
		f.Add(s)
	}
	sig, _ := autonomy.Sign(specSecret, specID, specTimestamp, []byte(specBody))
	f.Fuzz(func(t *testing.T, header string) {
		for _, s := range autonomy.ParseSignatures(header) {
			if len(s) != sha256.Size {
				t.Fatalf("a %d-byte MAC from %q", len(s), header)
			}
		}
		if n := len(autonomy.ParseSignatures(header)); n > 10 {
			t.Fatalf("%d signatures", n)
		}
		if len(autonomy.ParseSignatures(header)) < 10 {
			combined := header + " " + sig
			if got := autonomy.ParseSignatures(combined); len(got) == 0 {
				t.Fatalf("the valid signature after %q was lost", header)
			}
		}
		h := http.Header{}
		h.Set("webhook-id", specID)
		h.Set("webhook-timestamp", specTimestamp)
		h.Set("webhook-signature", header)
		at, _ := strconv.ParseInt(specTimestamp, 10, 64)
		if _, err := autonomy.Verify(specSecret, h, []byte(specBody), time.Unix(at, 0), time.Minute); err == nil && !strings.Contains(header, sig[3:]) {
			t.Fatalf("Verify accepted %q, which does not hold the signature", header)
		}
	})
}
