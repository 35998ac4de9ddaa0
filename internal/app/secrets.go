package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/config"
)

// ssmSettings adjust the SSM client; tests point it at a fake endpoint.
type ssmSettings struct {
	// endpoint replaces https://ssm.<region>.amazonaws.com.
	endpoint string
	// backoff is the wait before the first retry (doubled for each next one); 0: 200ms.
	backoff time.Duration
}

// ssmSecret is one value that may come from an SSM parameter instead of the environment.
type ssmSecret struct {
	env   string  // the environment variable the value otherwise comes from
	param string  // the SSM parameter name; empty: keep the environment's value
	dst   *string // where the value goes
}

// resolveSecrets replaces each secret whose *_SSM parameter name is set with the
// parameter's decrypted value (GetParameter WithDecryption, so SecureStrings work). Nothing
// is asked of AWS when no name is set, which is the local case. Values never appear in
// errors or logs; names do.
func resolveSecrets(ctx context.Context, cfg config.Config, s ssmSettings) (config.Config, error) {
	var secretKey string
	secrets := []ssmSecret{
		{"DOOR_DATABASE_URL", cfg.DoorDatabaseURLParam, &cfg.DoorDatabaseURL},
		{"APP_DATABASE_URL", cfg.AppDatabaseURLParam, &cfg.AppDatabaseURL},
		{"GEMINI_API_KEY", cfg.GeminiAPIKeyParam, &cfg.GeminiAPIKey},
		{"STEWARD_SECRET_KEY", cfg.SecretKeyParam, &secretKey},
		{"STEWARD_TELEGRAM_WEBHOOK_SECRET", cfg.TelegramWebhookSecretParam, &cfg.TelegramWebhookSecret},
		{"STEWARD_VAPID_PRIVATE_KEY", cfg.VAPIDPrivateKeyParam, &cfg.VAPIDPrivateKey},
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
	client, err := newSSMClient(cfg.AWS, s)
	if err != nil {
		return cfg, fmt.Errorf("%s_SSM is set: %w", wanted[0].env, err)
	}
	var errs []error
	for _, sc := range wanted {
		value, err := client.GetParameter(ctx, sc.param)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("read %s from SSM parameter %s (%s_SSM): %w", sc.env, sc.param, sc.env, err))
		case value == "":
			errs = append(errs, fmt.Errorf("SSM parameter %s (%s_SSM) is empty", sc.param, sc.env))
		default:
			*sc.dst = value
		}
	}
	if secretKey != "" {
		k, err := config.DecodeKey(secretKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("STEWARD_SECRET_KEY from SSM parameter %s %w", cfg.SecretKeyParam, err))
		}
		cfg.SecretKey = k
	}
	if cfg.TelegramWebhookSecretParam != "" && cfg.TelegramWebhookSecret != "" {
		if err := config.CheckTelegramSecret(cfg.TelegramWebhookSecret); err != nil {
			errs = append(errs, fmt.Errorf("STEWARD_TELEGRAM_WEBHOOK_SECRET from SSM parameter %s %w", cfg.TelegramWebhookSecretParam, err))
			cfg.TelegramWebhookSecret = ""
		}
	}
	if cfg.VAPIDPrivateKeyParam != "" && cfg.VAPIDPrivateKey != "" {
		if err := config.CheckVAPID(cfg.VAPIDPublicKey, cfg.VAPIDPrivateKey); err != nil {
			errs = append(errs, fmt.Errorf("STEWARD_VAPID_PRIVATE_KEY from SSM parameter %s: %w", cfg.VAPIDPrivateKeyParam, err))
			cfg.VAPIDPrivateKey = ""
		}
	}
	return cfg, errors.Join(errs...)
}

// newSSMClient is the client of GetParameter, as s adjusts it.
func newSSMClient(a config.AWS, s ssmSettings) (*awsapi.SSM, error) {
	c, err := awsapi.NewSSM(a, s.endpoint)
	if err == nil && s.backoff > 0 {
		c.Backoff = s.backoff
	}
	return c, err
}
