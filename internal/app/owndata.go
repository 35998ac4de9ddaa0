package app

import (
	"github.com/stewardhq/steward/internal/erasure"
	"github.com/stewardhq/steward/internal/export"
)

// ownData builds the services of the owner's own data (docs/DATA.md): deleting,
// renaming, searching and forgetting (a turn is cancelled through the runner), and the
// export. The owner's zone, which groups a search by day, is their calendar's.
func (a *App) ownData() {
	a.Erasure = &erasure.Service{Store: a.Store, Turns: a.Runner, Documents: a.Documents, Zone: a.Accounts.Zone, Now: a.Now}
	a.Export = &export.Service{Store: a.Store, Documents: a.Documents, Now: a.Now}
}
