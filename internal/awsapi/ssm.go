package awsapi

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/stewardhq/steward/internal/config"
)

// SSM reads parameters of AWS Systems Manager (awsJson1_1): the secrets a cold start names by
// their *_SSM variables.
type SSM struct{ *JSONClient }

// NewSSM makes a client of SSM at endpoint (empty: the region's).
func NewSSM(a config.AWS, endpoint string) (*SSM, error) {
	c, err := NewJSONClient(a, "ssm", endpoint, "application/x-amz-json-1.1", "reading SSM")
	if err != nil {
		return nil, err
	}
	return &SSM{c}, nil
}

// GetParameter returns the decrypted value of the parameter name (WithDecryption, so
// SecureStrings work). An error never holds the answer's body: it may hold the secret.
func (s *SSM) GetParameter(ctx context.Context, name string) (string, error) {
	raw, err := s.Do(ctx, "AmazonSSM.GetParameter", struct {
		Name           string
		WithDecryption bool
	}{name, true})
	if err != nil {
		return "", err
	}
	var out struct {
		Parameter *struct{ Value string }
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Parameter == nil {
		return "", errors.New("SSM answered GetParameter with no parameter")
	}
	return out.Parameter.Value, nil
}
