package childproc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/childproc"
)

// TestSlotsShareAmongOwners: one owner gets half the slots; when every slot is taken a
// third owner is refused as busy, and gets one as soon as one is released.
func TestSlotsShareAmongOwners(t *testing.T) {
	ctx := context.Background()
	s := childproc.NewSlots(2)
	alice, bob, carol := uuid.New(), uuid.New(), uuid.New()
	releaseAlice, err := s.Acquire(ctx, alice, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(ctx, alice, 0); !errors.Is(err, childproc.ErrShare) {
		t.Fatalf("alice's second slot: %v; want ErrShare", err)
	}
	releaseBob, err := s.Acquire(ctx, bob, 0)
	if err != nil {
		t.Fatalf("bob: %v", err)
	}
	defer releaseBob()
	if _, err := s.Acquire(ctx, carol, 0); !errors.Is(err, childproc.ErrBusy) {
		t.Fatalf("carol with every slot taken: %v; want ErrBusy", err)
	}
	got := make(chan error)
	go func() {
		release, err := s.Acquire(ctx, carol, 1<<62)
		if err == nil {
			release()
		}
		got <- err
	}()
	releaseAlice()
	releaseAlice() // twice is once
	if err := <-got; err != nil {
		t.Fatalf("carol after alice released: %v", err)
	}
}
