// Package migrations embeds Steward's goose SQL migrations, which are also sqlc's schema.
package migrations

import "embed"

// FS holds the *.sql migrations.
//
//go:embed *.sql
var FS embed.FS
