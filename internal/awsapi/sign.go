// Package awsapi holds every call Steward makes to AWS (docs/ARCHITECTURE.md §10), signed
// with Signature Version 4 (the AWS SDK's signer, not its service clients: those bring every
// operation of a service and the SDK's credential chain into each Lambda bootstrap, see
// internal/lambdatest): SSM's GetParameter, Secrets Manager's GetSecretValue and
// PutSecretValue and SQS's SendMessage over one JSON-protocol client, the document bucket's
// objects in S3, and Lambda's Invoke for `steward remote`.
package awsapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/stewardhq/steward/internal/config"
)

// Signer signs requests with one role's credentials in one region.
type Signer struct {
	Region string
	creds  aws.Credentials
	v4     *v4.Signer // every service but S3: the path is escaped again, as SigV4 wants
	s3     *v4.Signer // S3 signs the path as sent, without escaping it a second time
}

// NewSigner makes a signer of a's credentials. It fails, naming what is missing and why
// (the feature that needs AWS), without a region and credentials.
func NewSigner(a config.AWS, why string) (*Signer, error) {
	var missing []string
	for _, v := range []struct{ name, value string }{
		{"AWS_REGION", a.Region}, {"AWS_ACCESS_KEY_ID", a.AccessKeyID}, {"AWS_SECRET_ACCESS_KEY", a.SecretAccessKey},
	} {
		if v.value == "" {
			missing = append(missing, v.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s needs AWS credentials; not set: %s (Lambda sets them; elsewhere: eval \"$(aws configure export-credentials --format env)\" and export AWS_REGION)",
			why, strings.Join(missing, ", "))
	}
	return &Signer{
		Region: a.Region,
		creds:  aws.Credentials{AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey, SessionToken: a.SessionToken},
		v4:     v4.NewSigner(),
		s3:     v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }),
	}, nil
}

// Sign signs req, whose body hashes to payloadHash (PayloadHash), for service (ssm, sqs,
// s3), now.
func (s *Signer) Sign(ctx context.Context, req *http.Request, payloadHash, service string) error {
	signer := s.v4
	if service == "s3" {
		signer = s.s3
	}
	if err := signer.SignHTTP(ctx, s.creds, req, payloadHash, service, s.Region, time.Now()); err != nil {
		return fmt.Errorf("sign the request: %w", err)
	}
	return nil
}

// PayloadHash is the hex SHA-256 of a request body, as SigV4 signs it.
func PayloadHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// Endpoint is service's regional endpoint: https://<service>.<region>.amazonaws.com/ (.com.cn
// in the China regions).
func Endpoint(service, region string) string {
	domain := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	return "https://" + service + "." + region + "." + domain + "/"
}
