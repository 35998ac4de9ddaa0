package steward

import (
	"time"

	"github.com/google/uuid"
)

// Ledger account kinds (docs/ARCHITECTURE.md, the ledger): money the owner has or owes, and
// where it came from or went.
const (
	AccountAsset     = "asset"
	AccountLiability = "liability"
	AccountIncome    = "income"
	AccountExpense   = "expense"
	AccountEquity    = "equity"
)

// Uncategorized is the expense account imported and recorded money lands on until the
// owner (or an approved categorize call) re-points it.
const Uncategorized = "Uncategorized"

// Ledger transaction sources.
const (
	SourceImport = "import"
	SourceManual = "manual"
	SourceSeed   = "seed"
)

// LedgerAccount is one account of the owner's book.
type LedgerAccount struct {
	ID       uuid.UUID `json:"id"`
	Name     string    `json:"name"`
	Kind     string    `json:"kind"`
	Currency string    `json:"currency"`
}

// Posting is one leg of a transaction: a signed amount in integer minor units on an account.
type Posting struct {
	AccountID   uuid.UUID
	AmountMinor int64
	Currency    string
}

// NewLedgerTxn is a transaction to record; its postings must sum to zero per currency
// (the database refuses it otherwise). A non-empty ImportHash makes recording it again a no-op.
type NewLedgerTxn struct {
	Date        time.Time
	Description string
	Merchant    string
	Source      string
	ImportHash  string
	Postings    []Posting
}

// LedgerEntry is the money side of a transaction: its posting on an asset or liability
// account, with the category (expense or income account) it was booked against.
type LedgerEntry struct {
	ID          uuid.UUID `json:"id"`
	Date        time.Time `json:"-"`
	Description string    `json:"description"`
	Merchant    string    `json:"merchant"`
	Source      string    `json:"source"`
	Account     string    `json:"account"`
	Category    string    `json:"category"`
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
}

// Budget is a monthly spending limit for one category.
type Budget struct {
	Category     string `json:"category"`
	MonthlyMinor int64  `json:"monthly_minor"`
	Currency     string `json:"currency"`
}
