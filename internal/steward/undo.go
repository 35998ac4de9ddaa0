package steward

import (
	"time"

	"github.com/google/uuid"
)

// DefaultUndoWindow is how long after it ran a database-local write can be undone when
// STEWARD_UNDO_WINDOW is not set.
const DefaultUndoWindow = 10 * time.Minute

// The operations an Inverse performs, one for each kind of database-local write.
const (
	UndoDeleteTask        = "delete_task"        // create_task: delete the task it created
	UndoReopenTask        = "reopen_task"        // complete_task: open the task again
	UndoForgetFact        = "forget_fact"        // remember: forget the fact it created
	UndoRestoreFact       = "restore_fact"       // forget: bring the fact back
	UndoRecategorize      = "recategorize"       // categorize: each transaction back to its category
	UndoDeleteTransaction = "delete_transaction" // record_expense: delete the transaction
	UndoDeleteDocument    = "delete_document"    // save_document: delete the document
)

// Inverse is how an undo reverts one succeeded write: the tool computes it from what it
// changed, the journal keeps it, and the undo service applies it in one owner transaction
// (docs/ARCHITECTURE.md §2).
type Inverse struct {
	// Op is one of the Undo* operations.
	Op string `json:"op"`
	// ID is the task, fact, transaction or document the operation reverts.
	ID uuid.UUID `json:"id,omitzero"`
	// Moves are, for recategorize, the transactions to move back to each category.
	Moves []Recategorize `json:"moves,omitempty"`
}

// Recategorize moves transactions back to the category (account name) they were in.
type Recategorize struct {
	Category     string      `json:"category"`
	Transactions []uuid.UUID `json:"transactions"`
}

// Undone is what an undo did, for the face that asked.
type Undone struct {
	TurnID   uuid.UUID `json:"turn_id"`
	CallID   string    `json:"call_id"`
	Tool     string    `json:"tool"`
	Op       string    `json:"op"`
	UndoneAt time.Time `json:"undone_at"`
	UndoneBy string    `json:"undone_by"`
}
