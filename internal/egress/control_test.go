package egress

import (
	"errors"
	"testing"
)

// TestControl: the dialer's last check refuses the address actually connected to, whatever
// resolved it.
func TestControl(t *testing.T) {
	t.Parallel()
	g := NewGuard(Options{})
	for _, tc := range []struct {
		network, address string
		ok               bool
	}{
		{"tcp4", "93.184.215.14:443", true},
		{"tcp6", "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443", true},
		{"tcp4", "127.0.0.1:443", false},
		{"tcp4", "169.254.169.254:443", false},
		{"tcp6", "[::1]:443", false},
		{"tcp6", "[fd00:ec2::254]:443", false},
		{"tcp6", "[::ffff:93.184.215.14]:443", false},
		{"tcp4", "93.184.215.14:22", false},
		{"udp4", "93.184.215.14:443", false},
		{"tcp4", "not an address", false},
	} {
		err := g.control(tc.network, tc.address, nil)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBlocked)) {
			t.Errorf("control(%s, %s) = %v, want ok=%v", tc.network, tc.address, err, tc.ok)
		}
	}
}
