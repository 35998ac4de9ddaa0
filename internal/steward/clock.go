package steward

import "time"

// Clock is Steward's one clock type (docs/ARCHITECTURE.md §9): every expiry, lease and
// timestamp a service decides is read through the one internal/app builds (App.Now) and
// hands to each; tests pass one they move. The nil Clock is the system clock, so no package
// keeps a fallback of its own.
type Clock func() time.Time

// Now is the clock's time; time.Now for the nil Clock.
func (c Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	return c()
}
