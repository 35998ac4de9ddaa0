package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	. "github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// Values the schema refuses (a check constraint, a NUL that text and jsonb cannot hold) are
// client errors with CodeInvalid and a message without SQL, not internal errors (issue 10,
// item 5).
func TestRefusedValuesAreInvalid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t, 2)
	owner, _ := db.Owner(t, "alice")
	for name, rule := range map[string]steward.Rule{
		"check constraint (23514)": {Tool: "Notify", Match: steward.MatchPattern, Effect: "allow", Source: "api"},
		"NUL in text (22021)":      {Tool: "notify", Match: steward.MatchPattern, Effect: "allow", Source: "api", Note: "a\x00b"},
		"NUL in jsonb (22P05)":     {Tool: "notify", Match: steward.MatchPattern, Effect: "allow", Source: "api", Predicate: json.RawMessage(`{"t":"a\u0000b"}`)},
	} {
		err := db.Store.WithOwner(ctx, owner.ID, func(tx *Tx) error {
			_, err := tx.Rules.Create(ctx, rule)
			return err
		})
		var e *steward.Error
		if steward.ErrorCode(err) != steward.CodeInvalid || !errors.As(err, &e) || strings.Contains(e.Message, "SQLSTATE") {
			t.Errorf("%s: %v, want a CodeInvalid error without SQL", name, err)
		}
	}
}
