package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/stewardhq/steward/internal/config"
)

// ssmSettings adjust the SSM client; tests point it at a fake endpoint.
type ssmSettings struct {
	// options are applied to the client after the default AWS configuration.
	options []func(*ssm.Options)
}

// secret is one value that may come from an SSM parameter instead of the environment.
type secret struct {
	env   string  // the environment variable the value otherwise comes from
	param string  // the SSM parameter name; empty: keep the environment's value
	dst   *string // where the value goes
}

// resolveSecrets replaces each secret whose *_SSM parameter name is set with the
// parameter's decrypted value (GetParameter WithDecryption, so SecureStrings work). Nothing
// is asked of AWS when no name is set, which is the local case. Values never appear in
// errors or logs; names do.
func resolveSecrets(ctx context.Context, cfg config.Config, s ssmSettings) (config.Config, error) {
	secrets := []secret{
		{"DOOR_DATABASE_URL", cfg.DoorDatabaseURLParam, &cfg.DoorDatabaseURL},
		{"APP_DATABASE_URL", cfg.AppDatabaseURLParam, &cfg.AppDatabaseURL},
		{"GEMINI_API_KEY", cfg.GeminiAPIKeyParam, &cfg.GeminiAPIKey},
	}
	var wanted []secret
	for _, sc := range secrets {
		if sc.param != "" {
			wanted = append(wanted, sc)
		}
	}
	if len(wanted) == 0 {
		return cfg, nil
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return cfg, fmt.Errorf("load AWS configuration for SSM: %w", err)
	}
	client := ssm.NewFromConfig(awsCfg, s.options...)
	var errs []error
	for _, sc := range wanted {
		out, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(sc.param), WithDecryption: aws.Bool(true)})
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("read %s from SSM parameter %s (%s_SSM): %w", sc.env, sc.param, sc.env, err))
		case out.Parameter == nil || aws.ToString(out.Parameter.Value) == "":
			errs = append(errs, fmt.Errorf("SSM parameter %s (%s_SSM) is empty", sc.param, sc.env))
		default:
			*sc.dst = aws.ToString(out.Parameter.Value)
		}
	}
	return cfg, errors.Join(errs...)
}
