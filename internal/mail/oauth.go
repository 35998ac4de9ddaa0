package mail

import (
	"errors"

	"github.com/emersion/go-sasl"

	"github.com/stewardhq/steward/internal/steward"
)

// ErrTokenRefused marks a login an IMAP or SMTP server refused with the account's OAuth access
// token: the caller refreshes the token once and tries again (internal/accounts).
var ErrTokenRefused = errors.New("the mail server refused the access token")

// The SASL mechanisms a token logs in with (the Account's SASL).
const (
	SASLXOAuth2     = "xoauth2"
	SASLOAuthBearer = "oauthbearer"
)

// saslClient is the login of a: PLAIN with the password, or the OAuth mechanism with the token.
func saslClient(a Account, e endpoint) sasl.Client {
	switch {
	case a.Token == "":
		return sasl.NewPlainClient("", a.Username, a.Password)
	case a.SASL == SASLOAuthBearer:
		return sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: a.Username, Token: a.Token, Host: e.host, Port: e.port})
	}
	return xoauth2{user: a.Username, token: a.Token}
}

// xoauth2 is Google's and Microsoft's XOAUTH2 SASL mechanism (go-sasl has OAUTHBEARER only):
// one initial response, "user=U^Aauth=Bearer T^A^A"; a refusal comes as a JSON challenge,
// answered with an empty line so the server ends the exchange with its error.
type xoauth2 struct{ user, token string }

func (x xoauth2) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.user + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

func (x xoauth2) Next([]byte) ([]byte, error) { return []byte{}, nil }

// refused is a login refused with a's token (or password), in words.
func refused(a Account, server string, detail string) error {
	if a.Token == "" {
		return steward.Errorf(steward.CodeInvalid, "the %s refused the login of %q: check the user name and password (an app password where the provider asks for one)%s", server, a.Username, detail)
	}
	return errors.Join(ErrTokenRefused, steward.Errorf(steward.CodeInvalid, "the %s refused the access token of %q%s", server, a.Username, detail))
}
