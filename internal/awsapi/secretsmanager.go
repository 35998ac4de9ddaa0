package awsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/config"
)

// SecretsManager reads and writes AWS Secrets Manager secrets (awsJson1_1): the secrets a
// deploy generates (docs/ARCHITECTURE.md §14) and the Aurora master user's.
type SecretsManager struct{ *JSONClient }

// NewSecretsManager makes a client of Secrets Manager at endpoint (empty: a.Endpoints', else
// the region's).
func NewSecretsManager(a config.AWS, endpoint string) (*SecretsManager, error) {
	c, err := NewJSONClient(a, "secretsmanager", endpoint, "application/x-amz-json-1.1", "reading Secrets Manager")
	if err != nil {
		return nil, err
	}
	return &SecretsManager{c}, nil
}

// GetSecretValue returns the current SecretString of the secret id (a name or an ARN). An
// error never holds the answer's body: it may hold the secret.
func (s *SecretsManager) GetSecretValue(ctx context.Context, id string) (string, error) {
	raw, err := s.Do(ctx, "secretsmanager.GetSecretValue", struct{ SecretId string }{id})
	if err != nil {
		return "", err
	}
	var out struct{ SecretString *string }
	if err := json.Unmarshal(raw, &out); err != nil || out.SecretString == nil {
		return "", errors.New("Secrets Manager answered GetSecretValue with no SecretString")
	}
	return *out.SecretString, nil
}

// PutSecretValue makes value the secret id's current SecretString.
func (s *SecretsManager) PutSecretValue(ctx context.Context, id, value string) error {
	_, err := s.Do(ctx, "secretsmanager.PutSecretValue", struct{ SecretId, SecretString string }{id, value})
	return err
}

// IsSecretARN reports whether ref names a Secrets Manager secret (arn:…:secretsmanager:…)
// rather than an SSM parameter.
func IsSecretARN(ref string) bool {
	return strings.HasPrefix(ref, "arn:") && strings.Contains(ref, ":secretsmanager:")
}

// Secrets reads secrets by reference, as the *_SSM variables give them: an SSM parameter
// name (GetParameter WithDecryption) or a Secrets Manager secret's ARN (GetSecretValue). Each
// service's client is made on first use, so a deployment that uses one never needs the
// other's endpoint.
type Secrets struct {
	aws config.AWS
	// Backoff is the wait before a call's first retry (0: the clients' 200ms).
	Backoff time.Duration
	ssm     *SSM
	sm      *SecretsManager
}

// NewSecrets reads secrets with a's credentials.
func NewSecrets(a config.AWS) *Secrets { return &Secrets{aws: a} }

// Get returns the value ref names. Errors name ref, never a value.
func (s *Secrets) Get(ctx context.Context, ref string) (string, error) {
	if IsSecretARN(ref) {
		sm, err := s.secretsManager()
		if err != nil {
			return "", err
		}
		v, err := sm.GetSecretValue(ctx, ref)
		if err != nil {
			return "", fmt.Errorf("Secrets Manager secret %s: %w", ref, err)
		}
		return v, nil
	}
	if s.ssm == nil {
		c, err := NewSSM(s.aws, "")
		if err != nil {
			return "", err
		}
		s.backoff(c.JSONClient)
		s.ssm = c
	}
	v, err := s.ssm.GetParameter(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("SSM parameter %s: %w", ref, err)
	}
	return v, nil
}

// Put makes value the current value of the Secrets Manager secret arn.
func (s *Secrets) Put(ctx context.Context, arn, value string) error {
	sm, err := s.secretsManager()
	if err != nil {
		return err
	}
	if err := sm.PutSecretValue(ctx, arn, value); err != nil {
		return fmt.Errorf("Secrets Manager secret %s: %w", arn, err)
	}
	return nil
}

func (s *Secrets) secretsManager() (*SecretsManager, error) {
	if s.sm == nil {
		c, err := NewSecretsManager(s.aws, "")
		if err != nil {
			return nil, err
		}
		s.backoff(c.JSONClient)
		s.sm = c
	}
	return s.sm, nil
}

func (s *Secrets) backoff(c *JSONClient) {
	if s.Backoff > 0 {
		c.Backoff = s.Backoff
	}
}
