package webapp_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/browsertest"
)

// passkeyServer is server with passkeys on, for the relying party "localhost": the browser
// opens it at http://localhost:PORT (a secure context; an IP address is no relying party).
// It returns that base URL and alice's key.
func passkeyServer(t *testing.T) (base, key string) {
	t.Helper()
	e := apptest.New(t, apptest.Options{Env: map[string]string{"STEWARD_PASSKEY_RP_ID": "localhost"}})
	u, _ := url.Parse(e.Server.URL)
	base = "http://localhost:" + u.Port()
	e.Passkeys.Origin = base // the server's port is known once it listens
	_, key = e.DB.Owner(t, "alice")
	return base, key
}

// virtualAuthenticator gives the browser of ctx Chromium's virtual platform authenticator
// (DevTools' WebAuthn domain): CTAP2, built in, holding discoverable credentials, verifying
// its user and answering at once.
func virtualAuthenticator(t *testing.T, ctx context.Context) webauthn.AuthenticatorID {
	t.Helper()
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	res, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	return res.AuthenticatorID
}

// TestBrowserPasskey: signed in with her key, alice adds a passkey in Settings (Chromium's
// virtual authenticator makes it), signs out, and signs in again with the passkey alone —
// no key, no name — landing on the chat.
func TestBrowserPasskey(t *testing.T) {
	t.Parallel()
	base, key := passkeyServer(t)
	ctx := browser(t)
	authn := virtualAuthenticator(t, ctx)

	var listed, status string
	err := chromedp.Do(ctx, signIn(base, key),
		chromedp.Navigate(base+"/settings"),
		chromedp.WaitEnabled(chromedp.Search(`//button[text()="Add a passkey"]`)),
		chromedp.SendKeys(chromedp.CSS(`#passkey-name`), "my laptop"),
		chromedp.Click(chromedp.Search(`//button[text()="Add a passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`ul.passkeys li`)),
		browsertest.Into(&listed, chromedp.Text(chromedp.CSS(`ul.passkeys`))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Shot(t, ctx, "settings-passkeys-desktop.png")
	if !strings.Contains(listed, "my laptop") || !strings.Contains(listed, "never used") {
		t.Fatalf("Settings lists the passkeys as %q; want my laptop, never used", listed)
	}
	creds, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: authn})
	if err != nil || len(creds.Credentials) != 1 || !creds.Credentials[0].IsResidentCredential || creds.Credentials[0].RpID != "localhost" {
		t.Fatalf("the authenticator holds %+v (%v); want one discoverable credential for localhost", creds, err)
	}

	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)),
		chromedp.WaitEnabled(chromedp.CSS(`#passkey-signin`)),
		chromedp.Click(chromedp.CSS(`#passkey-signin`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		chromedp.Navigate(base+"/settings"),
		chromedp.WaitVisible(chromedp.CSS(`ul.passkeys li`)),
		browsertest.Into(&listed, chromedp.Text(chromedp.CSS(`ul.passkeys`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(listed, "last used") {
		t.Fatalf("after a passkey sign-in Settings lists %q; want a last use", listed)
	}

	// Removed from Settings, the passkey signs nobody in, and the page says why.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.Search(`//button[text()="Remove"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`ul.passkeys li`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-name`)),
		browsertest.Into(&listed, chromedp.Text(chromedp.CSS(`main`))),
		chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)),
		chromedp.WaitEnabled(chromedp.CSS(`#passkey-signin`)),
		chromedp.Click(chromedp.CSS(`#passkey-signin`)),
		chromedp.WaitVisible(chromedp.CSS(`.passkey-status.error`)),
		browsertest.Into(&status, chromedp.Text(chromedp.CSS(`.passkey-status`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(listed, "No passkeys yet") {
		t.Fatalf("after Remove, Settings says %q", listed)
	}
	if !strings.Contains(status, "not registered with Steward") {
		t.Fatalf("a removed passkey's sign-in says %q", status)
	}
}

// TestBrowserAddDevice: Settings → Add a device shows a QR code of a one-time link; a phone
// (390×844) opens it, sees a page that signs nothing in by itself, presses "Sign in on this
// device" and is on the chat; opened again, the link is refused in words, and Settings says
// it was used.
func TestBrowserAddDevice(t *testing.T) {
	t.Parallel()
	base, key := passkeyServer(t)
	desk := browser(t)
	var link chromedp.AttributeResult
	var qr int
	err := chromedp.Do(desk, signIn(base, key),
		chromedp.Navigate(base+"/settings"),
		chromedp.Click(chromedp.Search(`//button[text()="Add a device"]`)),
		chromedp.WaitVisible(chromedp.CSS(`svg[aria-label="QR code of the sign-in link"]`)),
		browsertest.Into(&qr, chromedp.Evaluate[int](`document.querySelectorAll('svg[role=img] path').length`)),
		browsertest.Into(&link, chromedp.AttributeValue(chromedp.CSS(`a.device-link`), "href")))
	if err != nil {
		t.Fatal(err)
	}
	if qr != 1 || !strings.HasPrefix(link.Value, base+"/d/") {
		t.Fatalf("the QR code has %d paths and links to %q; want one path, a link under %s/d/", qr, link.Value, base)
	}

	browsertest.Shot(t, desk, "add-device-desktop.png")
	phone := browsertest.Start(t, 390, 844, 120*time.Second)
	var page, again string
	err = chromedp.Do(phone,
		chromedp.Navigate(link.Value),
		chromedp.WaitVisible(chromedp.Search(`//button[text()="Sign in on this device"]`)),
		browsertest.Into(&page, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Shot(t, phone, "device-link-phone.png")
	err = chromedp.Do(phone,
		chromedp.Navigate(link.Value), // a second look (a link preview) uses nothing
		chromedp.Click(chromedp.Search(`//button[text()="Sign in on this device"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		chromedp.Navigate(link.Value),
		chromedp.WaitVisible(chromedp.CSS(`main p[role=status]`)),
		browsertest.Into(&again, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "Sign in on this device?") {
		t.Fatalf("the link's page says %q", page)
	}
	if !strings.Contains(again, "already used") {
		t.Fatalf("the link opened a second time says %q; want that it was already used", again)
	}
	var used string
	err = chromedp.Do(desk, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`main p[role=status]`)),
		browsertest.Into(&used, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(used, "This link was used") {
		t.Fatalf("Settings says %q after the link was used", used)
	}
}
