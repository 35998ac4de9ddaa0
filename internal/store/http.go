package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/agent"
)

// Reads the HTTP API needs beyond the agent's Tx.

// conversationTurnsSQL lists one conversation's turns. It belongs in queries/turns.sql as
// ListConversationTurns (sqlc); until then it is the one hand-written query here, scanned by
// position into db.Turn, so it must select the table's columns in order (SELECT *).
const conversationTurnsSQL = `SELECT * FROM turns WHERE owner_id = $1 AND conversation_id = $2
ORDER BY created_at, id LIMIT $3`

// ConversationTurns lists the turns of one conversation, oldest first, at most limit.
func (t *Tx) ConversationTurns(ctx context.Context, conversationID uuid.UUID, limit int) ([]agent.Turn, error) {
	rows, err := t.tx.Query(ctx, conversationTurnsSQL, t.ownerID, conversationID, limit)
	if err != nil {
		return nil, fmt.Errorf("list turns of conversation %s: %w", conversationID, err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByPos[db.Turn])
	if err != nil {
		return nil, fmt.Errorf("list turns of conversation %s: %w", conversationID, err)
	}
	out := make([]agent.Turn, 0, len(found))
	for _, r := range found {
		turn, err := toTurn(r)
		if err != nil {
			return nil, err
		}
		out = append(out, turn)
	}
	return out, nil
}
