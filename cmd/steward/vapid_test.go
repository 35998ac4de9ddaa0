package main

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/config"
)

// TestVapidKeys: `steward vapid-keys` prints a pair config accepts, and a fresh one each time.
func TestVapidKeys(t *testing.T) {
	t.Parallel()
	pair := func() map[string]string {
		r := runCLI(t, nil, "vapid-keys")
		wantOK(t, r)
		env := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			k, v, _ := strings.Cut(line, "=")
			env[k] = v
		}
		return env
	}
	env := pair()
	env["STEWARD_VAPID_SUBJECT"] = "mailto:ops@example.com"
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil || cfg.VAPIDPublicKey == "" || cfg.VAPIDPrivateKey == "" {
		t.Fatalf("config of the printed pair: %+v, %v", env, err)
	}
	if again := pair(); again["STEWARD_VAPID_PRIVATE_KEY"] == env["STEWARD_VAPID_PRIVATE_KEY"] {
		t.Error("two runs printed the same private key")
	}
}
