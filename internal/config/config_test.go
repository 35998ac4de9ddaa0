package config

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.DebugAddr != "" || c.Model != DefaultModel || c.SuspendTTL != 7*24*time.Hour || c.MaxIterations != 8 || c.ContextTokens != 60000 {
		t.Fatalf("defaults: %+v", c)
	}
}

// TestReplayNeedsNoKey: replayed fixtures answer a Gemini chain without GEMINI_API_KEY.
func TestReplayNeedsNoKey(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"STEWARD_MODEL_FIXTURES": "evals/fixtures.json", "STEWARD_MODELS": "gemini:gemini-3.8-flash"}))
	if err != nil || !c.Replaying() || c.ModelFixturesMode != "replay" {
		t.Fatalf("config %+v, %v; want replaying without a key", c, err)
	}
	if _, err := Load(env(map[string]string{"STEWARD_MODELS": "gemini:gemini-3.8-flash"})); err == nil {
		t.Fatal("a Gemini chain without a key or fixtures loaded")
	}
}

// TestLoadTokenRates: STEWARD_TOKEN_RATES=PROSE:JSON, unset is none.
func TestLoadTokenRates(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"STEWARD_TOKEN_RATES": " 3.7 : 2.15"}))
	if err != nil || c.TokenRates != (TokenRates{Prose: 3.7, JSON: 2.15}) {
		t.Fatalf("%+v, %v", c.TokenRates, err)
	}
	if c, err = Load(env(nil)); err != nil || c.TokenRates != (TokenRates{}) {
		t.Fatalf("unset: %+v, %v", c.TokenRates, err)
	}
}

func TestLoadErrorsNameTheVariable(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		env  map[string]string
		want string
	}{
		"malformed database url":  {map[string]string{"DATABASE_URL": "postgres://u:secretpw@host:notaport/db"}, "DATABASE_URL is malformed"},
		"bad int":                 {map[string]string{"STEWARD_DB_MAX_CONNS": "lots"}, "STEWARD_DB_MAX_CONNS"},
		"bad exec mode":           {map[string]string{"STEWARD_DB_EXEC_MODE": "prepare"}, "STEWARD_DB_EXEC_MODE"},
		"exec mode without types": {map[string]string{"STEWARD_DB_EXEC_MODE": "simple_protocol"}, "STEWARD_DB_EXEC_MODE"},
		"int out of range":        {map[string]string{"STEWARD_MAX_ITERATIONS": "0"}, "STEWARD_MAX_ITERATIONS"},
		"context budget too low":  {map[string]string{"STEWARD_CONTEXT_TOKENS": "100"}, "STEWARD_CONTEXT_TOKENS"},
		"recall cutoff NaN":       {map[string]string{"STEWARD_MEMORY_MAX_DISTANCE": "NaN"}, "must be a number from 0.05 to 2"},
		"recall cutoff too far":   {map[string]string{"STEWARD_MEMORY_MAX_DISTANCE": "3"}, "STEWARD_MEMORY_MAX_DISTANCE"},
		"token rates one":         {map[string]string{"STEWARD_TOKEN_RATES": "4"}, "STEWARD_TOKEN_RATES"},
		"token rates zero":        {map[string]string{"STEWARD_TOKEN_RATES": "0:2.5"}, "STEWARD_TOKEN_RATES"},
		"token rates NaN":         {map[string]string{"STEWARD_TOKEN_RATES": "4:NaN"}, "STEWARD_TOKEN_RATES"},
		"bad duration":            {map[string]string{"STEWARD_SUSPEND_TTL": "7 days"}, "STEWARD_SUSPEND_TTL"},
		"bad addr":                {map[string]string{"STEWARD_ADDR": "8080"}, "STEWARD_ADDR"},
		"bad debug addr":          {map[string]string{"STEWARD_DEBUG_ADDR": "6060"}, "STEWARD_DEBUG_ADDR"},
		"bad level":               {map[string]string{"STEWARD_LOG_LEVEL": "loud"}, "STEWARD_LOG_LEVEL"},
		"bad gemini url":          {map[string]string{"GEMINI_BASE_URL": "localhost:9"}, "GEMINI_BASE_URL"},
		"price without a model":   {map[string]string{"STEWARD_MODEL_PRICES": "=1:2"}, "STEWARD_MODEL_PRICES"},
		"price without output":    {map[string]string{"STEWARD_MODEL_PRICES": "gemini-x=1"}, "STEWARD_MODEL_PRICES"},
		"price not a number":      {map[string]string{"STEWARD_MODEL_PRICES": "gemini-x=one:2"}, "STEWARD_MODEL_PRICES"},
		"negative price":          {map[string]string{"STEWARD_MODEL_PRICES": "gemini-x=1:-2"}, "STEWARD_MODEL_PRICES"},
		"infinite price":          {map[string]string{"STEWARD_MODEL_PRICES": "gemini-x=1:Inf"}, "STEWARD_MODEL_PRICES"},
		"price twice":             {map[string]string{"STEWARD_MODEL_PRICES": "gemini-x=1:2,gemini-x=3:4"}, "STEWARD_MODEL_PRICES"},
		"too many prices":         {map[string]string{"STEWARD_MODEL_PRICES": "gemini-x=1:2:0.1:9:5"}, "STEWARD_MODEL_PRICES"},
		"egress allow name":       {map[string]string{"STEWARD_EGRESS_ALLOW": "intranet.example:80"}, "STEWARD_EGRESS_ALLOW"},
		"egress allow no port":    {map[string]string{"STEWARD_EGRESS_ALLOW": "10.0.0.5"}, "STEWARD_EGRESS_ALLOW"},
		"bad search url":          {map[string]string{"STEWARD_SEARCH_URL": "searx.local"}, "STEWARD_SEARCH_URL"},
		"bad fixtures mode":       {map[string]string{"STEWARD_MODEL_FIXTURES": "f.json", "STEWARD_MODEL_FIXTURES_MODE": "rewind"}, "STEWARD_MODEL_FIXTURES_MODE"},
		"record without a file":   {map[string]string{"STEWARD_MODEL_FIXTURES_MODE": "record"}, "STEWARD_MODEL_FIXTURES_MODE"},
		"proxy header not a name": {map[string]string{"STEWARD_TRUSTED_PROXY_HEADER": "X-Forwarded-For: 1.2.3.4"}, "STEWARD_TRUSTED_PROXY_HEADER"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secretpw") {
				t.Fatalf("error leaks a password: %v", err)
			}
		})
	}
}

// TestLoadTrustedProxyHeader: a header name, canonicalized; unset, the peer is the client.
func TestLoadTrustedProxyHeader(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"STEWARD_TRUSTED_PROXY_HEADER": " x-forwarded-for "}))
	if err != nil || c.TrustedProxyHeader != "X-Forwarded-For" {
		t.Fatalf("%q, %v; want X-Forwarded-For", c.TrustedProxyHeader, err)
	}
	if c, err = Load(env(nil)); err != nil || c.TrustedProxyHeader != "" {
		t.Fatalf("unset: %q, %v", c.TrustedProxyHeader, err)
	}
}

// TestLoadEgressAllow: IP:port entries, IPv6 in brackets, IPv4-mapped forms unmapped (the
// guard compares plain IPv4).
func TestLoadEgressAllow(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"STEWARD_EGRESS_ALLOW": " 127.0.0.1:8080, [fd00::1]:443,[::ffff:10.0.0.5]:80 ,"}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ap := range c.EgressAllow {
		got = append(got, ap.String())
	}
	if strings.Join(got, " ") != "127.0.0.1:8080 [fd00::1]:443 10.0.0.5:80" {
		t.Fatalf("EgressAllow = %v", got)
	}
}

func TestRequire(t *testing.T) {
	t.Parallel()
	c, _ := Load(env(map[string]string{"DATABASE_URL": "postgres://a:b@127.0.0.1:5432/x"}))
	if err := c.Require("DATABASE_URL"); err != nil {
		t.Fatal(err)
	}
	err := c.Require("DATABASE_URL", "APP_DATABASE_URL")
	if err == nil || !strings.Contains(err.Error(), "APP_DATABASE_URL is not set") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadModelPrices(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"STEWARD_MODEL_PRICES": " gemini-x=0.5:3:0.05 , gemini-y=2:10,"}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ModelPrice{
		"gemini-x": {Input: 0.5, Output: 3, CachedInput: 0.05},
		"gemini-y": {Input: 2, Output: 10, CachedInput: 2}, // no cached price: no discount assumed
	}
	if len(c.ModelPrices) != len(want) || c.ModelPrices["gemini-x"] != want["gemini-x"] || c.ModelPrices["gemini-y"] != want["gemini-y"] {
		t.Fatalf("ModelPrices = %+v, want %+v", c.ModelPrices, want)
	}
}

func TestLoadModels(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"STEWARD_MODELS": " gemini:gemini-3.8-flash, openai:qwen3:8b ,", "GEMINI_API_KEY": "g",
		"OPENAI_BASE_URL": "http://localhost:11434/v1"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelRef{{ProviderGemini, "gemini-3.8-flash"}, {ProviderOpenAI, "qwen3:8b"}}
	if len(c.Models) != 2 || c.Models[0] != want[0] || c.Models[1] != want[1] {
		t.Fatalf("Models = %+v, want %+v", c.Models, want)
	}
	if c, err := Load(env(nil)); err != nil || c.Models != nil {
		t.Fatalf("unset STEWARD_MODELS: %+v, %v; want no chain", c.Models, err)
	}
	for in, why := range map[string]string{
		"anthropic:claude":                    "provider gemini or openai",
		"gpt-5-mini":                          "provider gemini or openai",
		"openai:gpt-5-mini":                   "OPENAI_API_KEY is not set",
		"gemini:gemini-3.8-flash":             "GEMINI_API_KEY is not set",
		"openai:gpt-5-mini,openai:gpt-5-mini": "same model twice",
	} {
		_, err := Load(env(map[string]string{"STEWARD_MODELS": in, "OPENAI_API_KEY": map[bool]string{true: "k"}[strings.Contains(why, "twice")]}))
		if err == nil || !strings.Contains(err.Error(), "STEWARD_MODELS") || !strings.Contains(err.Error(), why) {
			t.Errorf("STEWARD_MODELS=%s: err = %v, want %q", in, err, why)
		}
	}
	if _, err := Load(env(map[string]string{"OPENAI_BASE_URL": "localhost:11434"})); err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("OPENAI_BASE_URL without a scheme: err = %v", err)
	}
	if _, err := Load(env(map[string]string{"STEWARD_RUN_QUEUE_URL": "sqs.eu-west-1.amazonaws.com/1/q"})); err == nil || !strings.Contains(err.Error(), "STEWARD_RUN_QUEUE_URL") {
		t.Errorf("STEWARD_RUN_QUEUE_URL without a scheme: err = %v", err)
	}
	if c, err := Load(env(map[string]string{"STEWARD_RUN_QUEUE_URL": "https://sqs.eu-west-1.amazonaws.com/1/q"})); err != nil || c.RunQueueURL != "https://sqs.eu-west-1.amazonaws.com/1/q" {
		t.Errorf("STEWARD_RUN_QUEUE_URL: %q, %v", c.RunQueueURL, err)
	}
	if c, err := Load(env(nil)); err != nil || c.ContinueMargin != 30*time.Second {
		t.Errorf("STEWARD_CONTINUE_MARGIN default: %v, %v; want 30s", c.ContinueMargin, err)
	}
	if c, err := Load(env(map[string]string{"STEWARD_CONTINUE_MARGIN": "45s"})); err != nil || c.ContinueMargin != 45*time.Second {
		t.Errorf("STEWARD_CONTINUE_MARGIN=45s: %v, %v", c.ContinueMargin, err)
	}
	if _, err := Load(env(map[string]string{"STEWARD_CONTINUE_MARGIN": "-1s"})); err == nil || !strings.Contains(err.Error(), "STEWARD_CONTINUE_MARGIN") {
		t.Errorf("STEWARD_CONTINUE_MARGIN=-1s: err = %v, want one naming it", err)
	}
}

// TestCheckTelegramSecret: the loop accepts exactly what Telegram's secret_token pattern,
// ^[A-Za-z0-9_-]{1,256}$, accepts (the regexp is no longer compiled at package init).
func TestCheckTelegramSecret(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)
	for _, v := range []string{"", "a", "Az09_-", strings.Repeat("x", 256), strings.Repeat("x", 257), "a b", "ab\n", "\nab",
		"é", "a+b", "a/b", "a.b", "a=b", "Z", "-", "_", "a\x00b", "\xff"} {
		if got, want := CheckTelegramSecret(v) == nil, re.MatchString(v); got != want {
			t.Errorf("CheckTelegramSecret(%q) accepts: %v, the pattern: %v", v, got, want)
		}
	}
}

// TestVAPID: a Web Push key pair is both keys or neither, a pair that belongs together, with
// a contact; each refusal says what to set and never quotes the private key.
func TestVAPID(t *testing.T) {
	t.Parallel()
	const (
		pub   = "BNQ-mR-PHqmxAx8eBo6uPi7lchHs6uTdXoj4fzJn1HaC6A274oLre-hWvSKJBlolk5HmE1ASYrLCTKLgsfFzN5w"
		priv  = "tUfucXRsK5JSNG8NU2MuiiE3O11sFI3dtlM2Bxc2kmc"
		other = "dfcQN2X0OFVG5Los9WFhUzgQX1-D606nyV976FV8HgM"
	)
	raw, _ := base64.RawURLEncoding.DecodeString(priv)
	privHex := hex.EncodeToString(raw)
	for _, c := range []struct {
		name string
		env  map[string]string
		want string // "" loads
	}{
		{"none", map[string]string{}, ""},
		{"public only", map[string]string{"STEWARD_VAPID_PUBLIC_KEY": pub}, "needs STEWARD_VAPID_PRIVATE_KEY"},
		{"private only, no subject", map[string]string{"STEWARD_VAPID_PRIVATE_KEY": priv}, "STEWARD_VAPID_SUBJECT"},
		{"private only", map[string]string{"STEWARD_VAPID_PRIVATE_KEY": priv, "STEWARD_VAPID_SUBJECT": "mailto:a@example.com"}, ""},
		{"private in hex", map[string]string{"STEWARD_VAPID_PRIVATE_KEY": privHex, "STEWARD_VAPID_SUBJECT": "mailto:a@example.com"}, ""},
		{"private neither", map[string]string{"STEWARD_VAPID_PRIVATE_KEY": "not-a-key", "STEWARD_VAPID_SUBJECT": "mailto:a@example.com"}, "base64url or hex"},
		{"private from ssm, subject from the public URL's parameter", map[string]string{"STEWARD_VAPID_PRIVATE_KEY_SSM": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:vapid", "STEWARD_PUBLIC_URL_SSM": "/steward/public-url"}, ""},
		{"no subject", map[string]string{"STEWARD_VAPID_PUBLIC_KEY": pub, "STEWARD_VAPID_PRIVATE_KEY": priv}, "STEWARD_VAPID_SUBJECT"},
		{"http public url", map[string]string{"STEWARD_VAPID_PUBLIC_KEY": pub, "STEWARD_VAPID_PRIVATE_KEY": priv, "STEWARD_PUBLIC_URL": "http://127.0.0.1:8080"}, "when STEWARD_PUBLIC_URL is not https"},
		{"mismatch", map[string]string{"STEWARD_VAPID_PUBLIC_KEY": pub, "STEWARD_VAPID_PRIVATE_KEY": other, "STEWARD_VAPID_SUBJECT": "mailto:a@example.com"}, "does not belong to the public key"},
		{"from ssm", map[string]string{"STEWARD_VAPID_PUBLIC_KEY": pub, "STEWARD_VAPID_PRIVATE_KEY_SSM": "/steward/vapid", "STEWARD_PUBLIC_URL": "https://steward.example.com"}, ""},
		{"good", map[string]string{"STEWARD_VAPID_PUBLIC_KEY": pub, "STEWARD_VAPID_PRIVATE_KEY": priv, "STEWARD_VAPID_SUBJECT": "mailto:a@example.com"}, ""},
	} {
		cfg, err := Load(func(k string) string { return c.env[k] })
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && c.env["STEWARD_VAPID_PRIVATE_KEY"] != "" && (cfg.VAPIDPublicKey != pub || cfg.VAPIDPrivateKey != priv):
			t.Errorf("%s: keys %q, %q; want the pair in base64url, the public key derived", c.name, cfg.VAPIDPublicKey, cfg.VAPIDPrivateKey)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v; want %q", c.name, err, c.want)
		case err != nil && (strings.Contains(err.Error(), priv) || strings.Contains(err.Error(), other)):
			t.Errorf("%s: the error quotes the private key: %v", c.name, err)
		}
	}
}

// TestLoadPasskey: the passkey origin and relying party ID come from STEWARD_PASSKEY_ORIGIN
// and STEWARD_PASSKEY_RP_ID, else the public URL, else localhost at STEWARD_ADDR's port; an
// IP address is never a relying party ID, and a mismatched one is refused in words.
func TestLoadPasskey(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env            map[string]string
		origin, rpID   string
		wantErrMention string
	}{
		"steward serve's default": {nil, "http://localhost:8080", "localhost", ""},
		"any address, own port":   {map[string]string{"STEWARD_ADDR": "0.0.0.0:9000"}, "http://localhost:9000", "localhost", ""},
		"a named listen address":  {map[string]string{"STEWARD_ADDR": "steward.lan:9000"}, "http://steward.lan:9000", "steward.lan", ""},
		"from the public URL":     {map[string]string{"STEWARD_PUBLIC_URL": "https://steward.example.com/"}, "https://steward.example.com", "steward.example.com", ""},
		"a public URL with an IP": {map[string]string{"STEWARD_PUBLIC_URL": "http://192.168.1.5:8080"}, "http://192.168.1.5:8080", "", ""},
		"explicit origin":         {map[string]string{"STEWARD_PASSKEY_ORIGIN": "https://app.example.com:8443", "STEWARD_PUBLIC_URL": "https://x.example.org"}, "https://app.example.com:8443", "app.example.com", ""},
		"a parent domain":         {map[string]string{"STEWARD_PASSKEY_ORIGIN": "https://app.example.com", "STEWARD_PASSKEY_RP_ID": "Example.com"}, "https://app.example.com", "example.com", ""},
		"an unrelated RP ID":      {map[string]string{"STEWARD_PASSKEY_ORIGIN": "https://app.example.com", "STEWARD_PASSKEY_RP_ID": "other.org"}, "", "", "STEWARD_PASSKEY_RP_ID"},
		"an IP RP ID":             {map[string]string{"STEWARD_PASSKEY_RP_ID": "127.0.0.1"}, "", "", "not an IP address"},
		"an origin with a path":   {map[string]string{"STEWARD_PASSKEY_ORIGIN": "https://app.example.com/steward"}, "", "", "STEWARD_PASSKEY_ORIGIN"},
		"an explicit IP origin":   {map[string]string{"STEWARD_PASSKEY_ORIGIN": "http://10.0.0.2:8080"}, "", "", "passkeys need a name"},
		"not an http(s) origin":   {map[string]string{"STEWARD_PASSKEY_ORIGIN": "ftp://app.example.com"}, "", "", "STEWARD_PASSKEY_ORIGIN"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Load(env(tc.env))
			if tc.wantErrMention != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrMention) {
					t.Fatalf("err = %v; want one mentioning %q", err, tc.wantErrMention)
				}
				return
			}
			if err != nil || c.PasskeyOrigin != tc.origin || c.PasskeyRPID != tc.rpID {
				t.Fatalf("origin %q, RP ID %q, %v; want %q, %q", c.PasskeyOrigin, c.PasskeyRPID, err, tc.origin, tc.rpID)
			}
		})
	}
}

// TestDecodeKey: STEWARD_SECRET_KEY is 32 bytes in standard base64 or in hex (what a deploy
// generates); anything else is refused without quoting the value.
func TestDecodeKey(t *testing.T) {
	t.Parallel()
	want := bytes.Repeat([]byte{0xab}, 32)
	for _, v := range []string{base64.StdEncoding.EncodeToString(want), hex.EncodeToString(want), " " + hex.EncodeToString(want) + "\n"} {
		if k, err := DecodeKey(v); err != nil || !bytes.Equal(k, want) {
			t.Errorf("DecodeKey(%q) = %x, %v", v, k, err)
		}
	}
	for _, v := range []string{"", "abc", hex.EncodeToString(want[:31]), strings.Repeat("g", 64), base64.StdEncoding.EncodeToString(want[:16])} {
		if _, err := DecodeKey(v); err == nil || (v != "" && strings.Contains(err.Error(), v)) {
			t.Errorf("DecodeKey(%q): %v; want a refusal that does not quote the value", v, err)
		}
	}
}

// TestDatabaseSecret: a database secret is a URL, JSON with a url, or JSON with a user and
// password that fill the plain variable's URL; anything else is refused naming the
// variable, never quoting the secret.
func TestDatabaseSecret(t *testing.T) {
	t.Parallel()
	const plain = "postgres://db.example.com:5432/postgres?sslmode=require"
	for _, c := range []struct {
		plain, value, want, err string
	}{
		{"", "postgres://a:b@h/d", "postgres://a:b@h/d", ""},
		{"", `{"username":"steward_app","password":"pw","url":"postgres://steward_app:pw@h/steward"}`, "postgres://steward_app:pw@h/steward", ""},
		{plain, `{"username":"admin","password":"p@ss/word"}`, "postgres://admin:p%40ss%2Fword@db.example.com:5432/postgres?sslmode=require", ""},
		{"", `{"username":"admin","password":"s3cret"}`, "", "SUPERUSER_DATABASE_URL (its host and database) is not set"},
		{plain, `{"username":"admin"}`, "", "neither"},
		{plain, `{"username":`, "", "does not parse"},
		{"mysql://x", `{"username":"admin","password":"s3cret"}`, "", "not a postgres:// URL"},
	} {
		got, err := DatabaseSecret("SUPERUSER_DATABASE_URL", c.plain, c.value)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("DatabaseSecret(%q, %q) = %q, %v; want %q", c.plain, c.value, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "SUPERUSER_DATABASE_URL") || strings.Contains(err.Error(), "s3cret")):
			t.Errorf("DatabaseSecret(%q, %q): %v; want an error naming the variable and %q, not the password", c.plain, c.value, err, c.err)
		}
	}
}

// TestWithPublicURL: a public URL read after Load (STEWARD_PUBLIC_URL_SSM) moves the passkey
// origin and relying party and the VAPID subject along, unless the environment set them.
func TestWithPublicURL(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"STEWARD_PUBLIC_URL_SSM": "/steward/public-url",
		"STEWARD_VAPID_PRIVATE_KEY_SSM": "/steward/vapid"}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.WithPublicURL("https://abc.lambda-url.eu-west-1.on.aws/")
	if err != nil || got.PublicURL != "https://abc.lambda-url.eu-west-1.on.aws" || got.PasskeyOrigin != got.PublicURL ||
		got.PasskeyRPID != "abc.lambda-url.eu-west-1.on.aws" || got.VAPIDSubject != got.PublicURL {
		t.Fatalf("WithPublicURL = %q, origin %q, RP ID %q, subject %q, %v", got.PublicURL, got.PasskeyOrigin, got.PasskeyRPID, got.VAPIDSubject, err)
	}
	if _, err := c.WithPublicURL("http://10.0.0.1:8080"); err == nil || !strings.Contains(err.Error(), "STEWARD_VAPID_SUBJECT") {
		t.Errorf("an http public URL as the VAPID subject: %v; want a refusal naming STEWARD_VAPID_SUBJECT", err)
	}
	if _, err := c.WithPublicURL("ftp://x"); err == nil || !strings.Contains(err.Error(), "STEWARD_PUBLIC_URL") {
		t.Errorf("an ftp public URL: %v; want a refusal naming STEWARD_PUBLIC_URL", err)
	}
	explicit, err := Load(env(map[string]string{"STEWARD_PASSKEY_ORIGIN": "https://app.example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := explicit.WithPublicURL("https://abc.lambda-url.eu-west-1.on.aws"); err != nil || got.PasskeyOrigin != "https://app.example.com" {
		t.Errorf("an explicit passkey origin moved to %q (%v)", got.PasskeyOrigin, err)
	}
	set, _ := Load(env(map[string]string{"STEWARD_PUBLIC_URL": "https://steward.example.com"}))
	if got, _ := set.WithPublicURL("https://other.example.com"); got.PublicURL != "https://steward.example.com" {
		t.Errorf("the environment's public URL was replaced by %q", got.PublicURL)
	}
}

// TestLoadEndpoints: AWS's own endpoint variables point a service's client elsewhere.
func TestLoadEndpoints(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL_LAMBDA": "http://127.0.0.1:9001/"}))
	if err != nil || c.AWS.Endpoints["secretsmanager"] != "http://127.0.0.1:4566/" || c.AWS.Endpoints["lambda"] != "http://127.0.0.1:9001/" || c.AWS.Endpoints["ssm"] != "" {
		t.Fatalf("endpoints %v, %v", c.AWS.Endpoints, err)
	}
	if _, err := Load(env(map[string]string{"AWS_ENDPOINT_URL_SSM": "localhost:4566"})); err == nil || !strings.Contains(err.Error(), "AWS_ENDPOINT_URL_SSM") {
		t.Errorf("an endpoint without a scheme: %v", err)
	}
}

// TestLoadRetention: STEWARD_RETAIN_* take days, a Go duration or off; below a kind's least,
// or malformed, the error names the variable and says what is allowed.
func TestLoadRetention(t *testing.T) {
	t.Parallel()
	c, err := Load(env(nil))
	if want := (Retention{Audit: 365 * day, WebhookDeliveries: 30 * day, MemoryOutbox: 7 * day, JobRuns: 90 * day}); err != nil || c.Retention != want {
		t.Fatalf("defaults %+v, %v; want %+v", c.Retention, err, want)
	}
	c, err = Load(env(map[string]string{"STEWARD_RETAIN_AUDIT": "off", "STEWARD_RETAIN_WEBHOOKS": "48h",
		"STEWARD_RETAIN_OUTBOX": "0", "STEWARD_RETAIN_JOB_RUNS": "400D"}))
	if want := (Retention{WebhookDeliveries: 2 * day, JobRuns: 400 * day}); err != nil || c.Retention != want {
		t.Fatalf("set %+v, %v; want %+v", c.Retention, err, want)
	}
	for v, want := range map[string]string{
		"STEWARD_RETAIN_AUDIT=7d":       `STEWARD_RETAIN_AUDIT="7d" must be a number of days such as 90d (at least 30d) or off`,
		"STEWARD_RETAIN_WEBHOOKS=often": `STEWARD_RETAIN_WEBHOOKS="often" must be a number of days such as 90d (at least 1d) or off`,
		"STEWARD_RETAIN_OUTBOX=-5d":     `STEWARD_RETAIN_OUTBOX="-5d" must be a number of days such as 90d (at least 1h0m0s) or off`,
	} {
		name, value, _ := strings.Cut(v, "=")
		if _, err := Load(env(map[string]string{name: value})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", v, err, want)
		}
	}
}

// TestEveryVariableIsDocumented: each variable Load reads is a row of docs/CONFIGURATION.md,
// so a new knob cannot ship without its documentation.
func TestEveryVariableIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/CONFIGURATION.md")
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	_, _ = Load(func(name string) string { asked[name] = true; return "" })
	if len(asked) < 50 {
		t.Fatalf("Load read only %d variables: the recording getenv is not seeing them", len(asked))
	}
	for name := range asked {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("%s is read by config.Load but not documented in docs/CONFIGURATION.md", name)
		}
	}
}
