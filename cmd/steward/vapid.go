package main

import (
	"fmt"

	webpush "github.com/SherClockHolmes/webpush-go"
)

// vapidKeys prints a fresh Web Push key pair (docs/ARCHITECTURE.md §7) as the two settings
// that hold it. It needs no configuration and stores nothing: the operator keeps the pair.
func vapidKeys(e env) error {
	private, public, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, "A Web Push key pair for Settings → Notify this device. Set both (and STEWARD_VAPID_SUBJECT,"+
		" e.g. mailto:you@example.com, unless STEWARD_PUBLIC_URL is https) and keep the private key secret; on Lambda put it in"+
		" SSM (VapidPrivateKeyParameter) and pass the public key as VapidPublicKey. Changing the pair later drops every subscription.")
	fmt.Fprintf(e.stdout, "STEWARD_VAPID_PUBLIC_KEY=%s\nSTEWARD_VAPID_PRIVATE_KEY=%s\n", public, private)
	return nil
}
