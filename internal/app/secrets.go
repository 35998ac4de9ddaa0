package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/config"
)

// ssmSettings adjust the secrets' clients; tests point SSM at a fake endpoint (Secrets
// Manager's fake comes through config.AWS.Endpoints).
type ssmSettings struct {
	// endpoint replaces https://ssm.<region>.amazonaws.com.
	endpoint string
	// backoff is the wait before the first retry (doubled for each next one); 0: 200ms.
	backoff time.Duration
}

// ssmSecret is one value that may come from an SSM parameter or a Secrets Manager secret
// instead of the environment.
type ssmSecret struct {
	env   string  // the environment variable the value otherwise comes from
	param string  // the reference (an SSM parameter name or a secret's ARN); empty: keep the environment's value
	dst   *string // where the value goes
}

// resolveSecrets replaces each secret whose *_SSM reference is set with the value it names:
// an SSM parameter's decrypted value (GetParameter WithDecryption, so SecureStrings work) or
// a Secrets Manager secret's (docs/ARCHITECTURE.md §14). Nothing is asked of AWS when no
// reference is set, which is the local case. Values never appear in errors or logs; names
// do.
func resolveSecrets(ctx context.Context, cfg config.Config, s ssmSettings) (config.Config, error) {
	var secretKey, publicURL string
	appPlain, doorPlain := cfg.AppDatabaseURL, cfg.DoorDatabaseURL
	secrets := []ssmSecret{
		{"DOOR_DATABASE_URL", cfg.DoorDatabaseURLParam, &cfg.DoorDatabaseURL},
		{"APP_DATABASE_URL", cfg.AppDatabaseURLParam, &cfg.AppDatabaseURL},
		{"GEMINI_API_KEY", cfg.GeminiAPIKeyParam, &cfg.GeminiAPIKey},
		{"OPENAI_API_KEY", cfg.OpenAIAPIKeyParam, &cfg.OpenAIAPIKey},
		{"STEWARD_SECRET_KEY", cfg.SecretKeyParam, &secretKey},
		{"STEWARD_TELEGRAM_WEBHOOK_SECRET", cfg.TelegramWebhookSecretParam, &cfg.TelegramWebhookSecret},
		{"STEWARD_TELEGRAM_BOT_TOKEN", cfg.TelegramBotTokenParam, &cfg.TelegramBotToken},
		{"STEWARD_VAPID_PRIVATE_KEY", cfg.VAPIDPrivateKeyParam, &cfg.VAPIDPrivateKey},
		{"STEWARD_PUBLIC_URL", cfg.PublicURLParam, &publicURL},
		{"STEWARD_OAUTH_GOOGLE_CLIENT_SECRET", cfg.OAuth.Google.ClientSecretParam, &cfg.OAuth.Google.ClientSecret},
		{"STEWARD_OAUTH_MICROSOFT_CLIENT_SECRET", cfg.OAuth.Microsoft.ClientSecretParam, &cfg.OAuth.Microsoft.ClientSecret},
		{"STEWARD_OAUTH_GENERIC_CLIENT_SECRET", cfg.OAuth.Generic.ClientSecretParam, &cfg.OAuth.Generic.ClientSecret},
	}
	var wanted []ssmSecret
	for _, sc := range secrets {
		if sc.param != "" {
			wanted = append(wanted, sc)
		}
	}
	if len(wanted) == 0 {
		return cfg, nil
	}
	a := cfg.AWS
	if s.endpoint != "" {
		a.Endpoints = maps.Clone(a.Endpoints)
		if a.Endpoints == nil {
			a.Endpoints = map[string]string{}
		}
		a.Endpoints["ssm"] = s.endpoint
	}
	if _, err := awsapi.NewSigner(a, "reading secrets"); err != nil {
		return cfg, fmt.Errorf("%s_SSM is set: %w", wanted[0].env, err)
	}
	client := awsapi.NewSecrets(a)
	client.Backoff = s.backoff
	var errs []error
	for _, sc := range wanted {
		value, err := client.Get(ctx, sc.param)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("read %s (%s_SSM): %w", sc.env, sc.env, err))
		case value == "":
			errs = append(errs, fmt.Errorf("%s (%s_SSM) is empty", sc.param, sc.env))
		default:
			*sc.dst = value
		}
	}
	return checkResolved(cfg, secretKey, publicURL, appPlain, doorPlain, errs)
}

// checkResolved checks and decodes what came from SSM or Secrets Manager, as config.Load
// checks the same values from the environment; each error names the reference, never the
// value.
func checkResolved(cfg config.Config, secretKey, publicURL, appPlain, doorPlain string, errs []error) (config.Config, error) {
	for _, db := range []struct {
		variable, ref, plain string
		dst                  *string
	}{
		{"APP_DATABASE_URL", cfg.AppDatabaseURLParam, appPlain, &cfg.AppDatabaseURL},
		{"DOOR_DATABASE_URL", cfg.DoorDatabaseURLParam, doorPlain, &cfg.DoorDatabaseURL},
	} {
		if db.ref != "" && *db.dst != db.plain {
			u, err := config.DatabaseSecret(db.variable, db.plain, *db.dst)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", db.ref, err))
			}
			*db.dst = u
		}
	}
	if secretKey != "" {
		k, err := config.DecodeKey(secretKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("STEWARD_SECRET_KEY from %s %w", cfg.SecretKeyParam, err))
		}
		cfg.SecretKey = k
	}
	if cfg.TelegramWebhookSecretParam != "" && cfg.TelegramWebhookSecret != "" {
		if err := config.CheckTelegramSecret(cfg.TelegramWebhookSecret); err != nil {
			errs = append(errs, fmt.Errorf("STEWARD_TELEGRAM_WEBHOOK_SECRET from %s %w", cfg.TelegramWebhookSecretParam, err))
			cfg.TelegramWebhookSecret = ""
		}
	}
	if cfg.TelegramBotTokenParam != "" && cfg.TelegramBotToken != "" {
		if err := config.CheckTelegramToken(cfg.TelegramBotToken); err != nil {
			errs = append(errs, fmt.Errorf("STEWARD_TELEGRAM_BOT_TOKEN from %s %w", cfg.TelegramBotTokenParam, err))
			cfg.TelegramBotToken = ""
		}
	}
	if cfg.VAPIDPrivateKeyParam != "" && cfg.VAPIDPrivateKey != "" {
		pub, priv, err := config.VAPIDKeys(cfg.VAPIDPublicKey, cfg.VAPIDPrivateKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("STEWARD_VAPID_PRIVATE_KEY from %s: %w", cfg.VAPIDPrivateKeyParam, err))
		}
		cfg.VAPIDPublicKey, cfg.VAPIDPrivateKey = pub, priv
	}
	if publicURL != "" {
		var err error
		if cfg, err = cfg.WithPublicURL(publicURL); err != nil {
			errs = append(errs, fmt.Errorf("STEWARD_PUBLIC_URL from %s: %w", cfg.PublicURLParam, err))
		}
	}
	return cfg, errors.Join(errs...)
}
