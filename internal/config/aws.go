package config

import "strings"

// AWS is a region and the credentials of one role (temporary ones carry a session token),
// and the endpoints that replace a service's regional one: AWS's own variables
// AWS_ENDPOINT_URL_SSM, AWS_ENDPOINT_URL_SECRETS_MANAGER and AWS_ENDPOINT_URL_LAMBDA, keyed
// by the service's signing name (ssm, secretsmanager, lambda) — a LocalStack, or a test's
// fake.
type AWS struct {
	Region, AccessKeyID, SecretAccessKey, SessionToken string
	Endpoints                                          map[string]string
}

// aws reads the region and credentials the Lambda runtime sets for the function's role.
func (r *reader) aws() AWS {
	a := AWS{Region: r.str("AWS_REGION", ""), AccessKeyID: r.str("AWS_ACCESS_KEY_ID", ""),
		SecretAccessKey: r.str("AWS_SECRET_ACCESS_KEY", ""), SessionToken: r.str("AWS_SESSION_TOKEN", "")}
	for service, name := range map[string]string{"ssm": "AWS_ENDPOINT_URL_SSM", "secretsmanager": "AWS_ENDPOINT_URL_SECRETS_MANAGER", "lambda": "AWS_ENDPOINT_URL_LAMBDA"} {
		if v := r.str(name, ""); v != "" {
			r.httpURL(name, v)
			if a.Endpoints == nil {
				a.Endpoints = map[string]string{}
			}
			a.Endpoints[service] = strings.TrimRight(v, "/") + "/"
		}
	}
	return a
}
