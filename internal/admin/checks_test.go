package admin

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/store"
)

func TestBacklogCheck(t *testing.T) {
	t.Parallel()
	if c := backlogCheck(store.IngestBacklog{Pending: 2}); !c.OK || c.Detail != "2 pending, 0 failed, oldest pending 0s" {
		t.Errorf("pending only = %+v", c)
	}
	if c := backlogCheck(store.IngestBacklog{Failed: 1, LastError: "embed: 503"}); c.OK || !strings.HasSuffix(c.Detail, "last error: embed: 503") {
		t.Errorf("failed item = %+v; want a failing check naming the error", c)
	}
}
