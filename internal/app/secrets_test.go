package app

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/awsapi/awsapitest"
	"github.com/stewardhq/steward/internal/config"
)

// ssmAt points the SSM client at a fake.
func ssmAt(f *awsapitest.SSM) ssmSettings {
	return ssmSettings{endpoint: f.URL, backoff: time.Millisecond}
}

// testAWS is the region and role credentials the tests' Lambda runtime would set.
var testAWS = awsapitest.Creds

func TestResolveSecrets(t *testing.T) {
	t.Parallel()
	params := map[string]string{
		"/steward/door-database-url": "postgres://steward_door:pw1@db.internal:5432/steward",
		"/steward/app-database-url":  "postgres://steward_app:pw2@db.internal:5432/steward",
		"/steward/gemini-api-key":    "AIza-from-ssm",
		"/steward/empty":             "",
	}
	tests := []struct {
		name    string
		in      config.Config
		want    config.Config // the three secrets
		asked   []string
		wantErr []string // substrings of the error
	}{
		{
			name: "every secret from SSM, decrypted",
			in: config.Config{DoorDatabaseURLParam: "/steward/door-database-url", AppDatabaseURLParam: "/steward/app-database-url",
				GeminiAPIKeyParam: "/steward/gemini-api-key"},
			want: config.Config{DoorDatabaseURL: params["/steward/door-database-url"], AppDatabaseURL: params["/steward/app-database-url"],
				GeminiAPIKey: "AIza-from-ssm"},
			asked: []string{"/steward/door-database-url", "/steward/app-database-url", "/steward/gemini-api-key"},
		},
		{
			name:  "a parameter name wins over the environment; unnamed secrets keep theirs",
			in:    config.Config{DoorDatabaseURL: "postgres://local/x", AppDatabaseURL: "postgres://local/y", GeminiAPIKey: "env-key", GeminiAPIKeyParam: "/steward/gemini-api-key"},
			want:  config.Config{DoorDatabaseURL: "postgres://local/x", AppDatabaseURL: "postgres://local/y", GeminiAPIKey: "AIza-from-ssm"},
			asked: []string{"/steward/gemini-api-key"},
		},
		{
			name: "no names: AWS is never asked",
			in:   config.Config{DoorDatabaseURL: "postgres://local/x", AppDatabaseURL: "postgres://local/y"},
			want: config.Config{DoorDatabaseURL: "postgres://local/x", AppDatabaseURL: "postgres://local/y"},
		},
		{
			name:    "a missing parameter names itself and its variable",
			in:      config.Config{DoorDatabaseURLParam: "/steward/nope", AppDatabaseURLParam: "/steward/app-database-url"},
			asked:   []string{"/steward/nope", "/steward/app-database-url"},
			wantErr: []string{"/steward/nope", "DOOR_DATABASE_URL_SSM", "ParameterNotFound"},
		},
		{
			name:    "an empty parameter is an error, not an empty secret",
			in:      config.Config{GeminiAPIKeyParam: "/steward/empty"},
			asked:   []string{"/steward/empty"},
			wantErr: []string{"/steward/empty", "GEMINI_API_KEY_SSM", "empty"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := awsapitest.NewSSM(t, params)
			in := tt.in
			in.AWS = testAWS
			got, err := resolveSecrets(context.Background(), in, ssmAt(fake))
			var names []string
			for _, r := range fake.Asked() {
				if !r.WithDecryption {
					t.Errorf("GetParameter %s without WithDecryption: SecureStrings would come back encrypted", r.Name)
				}
				names = append(names, r.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.asked, ",") {
				t.Errorf("asked SSM for %v, want %v", names, tt.asked)
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatal("no error")
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				for _, v := range params {
					if v != "" && strings.Contains(err.Error(), v) {
						t.Errorf("error %q leaks a secret value", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.DatabaseURL != tt.want.DatabaseURL || got.AppDatabaseURL != tt.want.AppDatabaseURL || got.GeminiAPIKey != tt.want.GeminiAPIKey {
				t.Errorf("secrets = %q %q %q, want %q %q %q", got.DatabaseURL, got.AppDatabaseURL, got.GeminiAPIKey,
					tt.want.DatabaseURL, tt.want.AppDatabaseURL, tt.want.GeminiAPIKey)
			}
		})
	}
}

// TestResolveTelegramSecret: STEWARD_TELEGRAM_WEBHOOK_SECRET_SSM names the Telegram
// callback's secret (template.yaml's TelegramWebhookSecretParameter); a value that is not a
// valid secret_token fails the start without quoting it.
func TestResolveTelegramSecret(t *testing.T) {
	t.Parallel()
	fake := awsapitest.NewSSM(t, map[string]string{"/steward/telegram": "tg_secret-123", "/steward/bad": "not valid!"})
	got, err := resolveSecrets(context.Background(), config.Config{AWS: testAWS, TelegramWebhookSecretParam: "/steward/telegram"}, ssmAt(fake))
	if err != nil || got.TelegramWebhookSecret != "tg_secret-123" {
		t.Fatalf("resolve = %q, %v; want the parameter's value", got.TelegramWebhookSecret, err)
	}
	got, err = resolveSecrets(context.Background(), config.Config{AWS: testAWS, TelegramWebhookSecretParam: "/steward/bad"}, ssmAt(fake))
	if err == nil || !strings.Contains(err.Error(), "/steward/bad") || strings.Contains(err.Error(), "not valid!") || got.TelegramWebhookSecret != "" {
		t.Fatalf("resolve an invalid secret = %q, %v; want an error naming the parameter, not the value", got.TelegramWebhookSecret, err)
	}
}

// TestResolveSecretsNeedsCredentials: a parameter name without the AWS_* variables Lambda
// sets fails before any request, naming what is missing.
func TestResolveSecretsNeedsCredentials(t *testing.T) {
	t.Parallel()
	fake := awsapitest.NewSSM(t, nil)
	_, err := resolveSecrets(context.Background(), config.Config{AppDatabaseURLParam: "/steward/app-database-url", AWS: config.AWS{Region: "eu-west-1"}}, ssmAt(fake))
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"APP_DATABASE_URL_SSM", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
	if n := len(fake.Asked()); n != 0 {
		t.Errorf("SSM was asked %d times without credentials", n)
	}
}

// TestResolveGeneratedSecrets: what a deploy generates (docs/ARCHITECTURE.md §14) resolves
// from Secrets Manager by ARN — a role's secret of JSON with the URL the migrate function
// stored, the secret key and the VAPID private key in hex (the public key derived), the
// Telegram secret, a Gemini key the template stored — and the public URL from the SSM
// parameter the template writes, which moves the passkey origin along. A role's secret
// without its URL yet fails naming the secret, never its password.
func TestResolveGeneratedSecrets(t *testing.T) {
	t.Parallel()
	arn := func(name string) string {
		return "arn:aws:secretsmanager:eu-west-1:123456789012:secret:steward-" + name
	}
	vapidHex := strings.Repeat("1f", 32)
	sm := awsapitest.NewSecretsManager(t, map[string]string{
		arn("app"):      `{"username":"steward_app","password":"pw-app","dbname":"steward","url":"postgres://steward_app:pw-app@db.example.com:5432/steward?sslmode=require"}`,
		arn("door"):     `{"username":"steward_door","password":"pw-door","dbname":"steward"}`,
		arn("key"):      strings.Repeat("ab", 32),
		arn("vapid"):    vapidHex,
		arn("telegram"): "Tg0123456789abcdefABCDEF",
		arn("gemini"):   "AIza-from-the-template",
	})
	ssm := awsapitest.NewSSM(t, map[string]string{"/steward/public-url": "https://abc123.lambda-url.eu-west-1.on.aws/"})
	a := testAWS
	a.Endpoints = map[string]string{"secretsmanager": sm.URL + "/"}
	in, err := config.Load(func(k string) string {
		return map[string]string{
			"APP_DATABASE_URL_SSM": arn("app"), "DOOR_DATABASE_URL_SSM": arn("door"), "STEWARD_SECRET_KEY_SSM": arn("key"),
			"STEWARD_VAPID_PRIVATE_KEY_SSM": arn("vapid"), "STEWARD_TELEGRAM_WEBHOOK_SECRET_SSM": arn("telegram"),
			"GEMINI_API_KEY_SSM": arn("gemini"), "STEWARD_PUBLIC_URL_SSM": "/steward/public-url",
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	in.AWS = a
	_, err = resolveSecrets(context.Background(), in, ssmAt(ssm))
	if err == nil || !strings.Contains(err.Error(), arn("door")) || !strings.Contains(err.Error(), "no \"url\"") || strings.Contains(err.Error(), "pw-door") {
		t.Fatalf("a role's secret without its URL: %v; want an error naming the secret and not the password", err)
	}
	sm.Set(arn("door"), `{"username":"steward_door","password":"pw-door","url":"postgres://steward_door:pw-door@db.example.com:5432/steward"}`)
	got, err := resolveSecrets(context.Background(), in, ssmAt(ssm))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := hex.DecodeString(vapidHex)
	k, _ := ecdh.P256().NewPrivateKey(raw)
	for name, c := range map[string][2]string{
		"APP_DATABASE_URL":          {got.AppDatabaseURL, "postgres://steward_app:pw-app@db.example.com:5432/steward?sslmode=require"},
		"DOOR_DATABASE_URL":         {got.DoorDatabaseURL, "postgres://steward_door:pw-door@db.example.com:5432/steward"},
		"STEWARD_SECRET_KEY":        {hex.EncodeToString(got.SecretKey), strings.Repeat("ab", 32)},
		"STEWARD_VAPID_PRIVATE_KEY": {got.VAPIDPrivateKey, base64.RawURLEncoding.EncodeToString(raw)},
		"STEWARD_VAPID_PUBLIC_KEY":  {got.VAPIDPublicKey, base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes())},
		"GEMINI_API_KEY":            {got.GeminiAPIKey, "AIza-from-the-template"},
		"STEWARD_PUBLIC_URL":        {got.PublicURL, "https://abc123.lambda-url.eu-west-1.on.aws"},
		"passkey origin":            {got.PasskeyOrigin, "https://abc123.lambda-url.eu-west-1.on.aws"},
		"VAPID subject":             {got.VAPIDSubject, "https://abc123.lambda-url.eu-west-1.on.aws"},
	} {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
}
