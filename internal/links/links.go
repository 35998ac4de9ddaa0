// Package links is one-tap approval from a notification (docs/NOTIFICATIONS.md, "Approve from a
// notification"). When a turn suspends and its owner has a default notification channel, the
// transaction that saves the turn also stores a notification listing each pending call and,
// with STEWARD_PUBLIC_URL and STEWARD_SECRET_KEY set, an approve link and a deny link. A link
// is a capability: its token is an HMAC under STEWARD_SECRET_KEY of a random link id, only the
// token's SHA-256 is stored, and the stored notification holds a placeholder naming the link
// id, which the deliverer expands (Expand) into the link as it sends — so no token is ever in
// the database. A link is bound to the turn, that suspension, the pending calls with their args
// hashes and one decision. It is single-use, expires with the suspension (or earlier:
// STEWARD_LINK_TTL) and is void once the turn was decided anywhere else. Opening a link (GET)
// only shows a confirmation page: link scanners and chat unfurlers prefetch URLs, so a GET
// never decides. Its one button POSTs the decision, which goes through agent.Runner.ConfirmWith
// — the exactly-once claim — and marks the link used in the claim's transaction
// (docs/ARCHITECTURE.md §2).
package links

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Door finds whose link a token hash is, across owners. *store.Door implements it.
type Door interface {
	LookupLinkOwner(ctx context.Context, hash []byte) (uuid.UUID, error)
}

// DefaultTTL is a link's lifetime when Service.TTL is zero.
const DefaultTTL = 24 * time.Hour

// Issuer makes approval links: it writes them into a suspended turn's notification (the
// runner's Suspended hook, agent.Hooks) and turns them into URLs, the tokens of buttons and Web
// Push actions as the notification is sent. It calls nothing back (docs/ARCHITECTURE.md §7).
type Issuer struct {
	// PublicURL is the base of the links (STEWARD_PUBLIC_URL, no trailing slash); empty
	// sends no links and the notification says so.
	PublicURL string
	// Key derives the tokens (STEWARD_SECRET_KEY); empty sends no links and the notification
	// says so.
	Key []byte
	// TTL caps a link's life (STEWARD_LINK_TTL); zero means DefaultTTL.
	TTL time.Duration
	// Now is the clock (nil: the system clock).
	Now steward.Clock
}

// Service shows and uses approval links (and, through its Issuer, makes them).
type Service struct {
	Issuer
	Store     *store.Store
	Door      Door
	Confirmer agent.Confirmer
}

// The messages of the pages a link can lead to: clear, and saying nothing changed.
var (
	errUnknown   = steward.Errorf(steward.CodeNotFound, "This approval link is not valid. Nothing was changed.")
	errUsed      = steward.Errorf(steward.CodeConflict, "This approval link was already used. Nothing was changed.")
	errExpired   = steward.Errorf(steward.CodeConflict, "This approval link has expired. Nothing was changed.")
	errCancelled = steward.Errorf(steward.CodeConflict, "This request was cancelled: its actions will never run. Nothing was changed.")
	errDecided   = steward.Errorf(steward.CodeConflict, "This request is no longer waiting for a decision: it was decided elsewhere or has expired. Nothing was changed.")
)

// tokenLen is the length of a token: 32 random bytes in unpadded base64url.
const tokenLen = 43

// Suspended is an agent.Hooks.Suspended: in the transaction that saves a suspended turn, it
// stores the notification (and the links) for an owner with a default channel (notify).
func (s *Issuer) Suspended(ctx context.Context, tx agent.Tx, turn steward.Turn) (notify bool, err error) {
	if turn.State == nil || len(turn.State.Pending) == 0 || turn.ExpiresAt == nil {
		return false, nil
	}
	ok, err := tx.Links.Notifiable(ctx)
	if err != nil || !ok {
		return false, err
	}
	pending := turn.State.Pending
	var b strings.Builder
	if len(pending) == 1 {
		b.WriteString("Steward is waiting for your approval of one action:\n")
	} else {
		fmt.Fprintf(&b, "Steward is waiting for your approval of %d actions (the links decide them all):\n", len(pending))
	}
	for _, p := range pending {
		fmt.Fprintf(&b, "• %s: %s\n", p.Tool, steward.ArgsSummary(p.Args))
	}
	switch {
	case s.PublicURL == "":
		b.WriteString("\nOne-tap links are off on this deployment (STEWARD_PUBLIC_URL is not set): approve or deny in the web app or the API.")
	case len(s.Key) == 0:
		b.WriteString("\nOne-tap links are off on this deployment (STEWARD_SECRET_KEY is not set): approve or deny in the web app or the API.")
	default:
		ids, exp, err := s.pair(ctx, tx.Links, turn)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(&b, "\nApprove: %s%s]\nDeny: %s%s]", placeholder, ids[0], placeholder, ids[1])
		fmt.Fprintf(&b, "\n\nEach link opens a page to confirm; it works once, until %s.", exp.UTC().Format("2006-01-02 15:04 MST"))
	}
	if _, err := tx.Data.CreateNotification(ctx, "", "Approval needed", b.String()); err != nil {
		return false, err
	}
	return true, nil
}

// pair stores a suspended turn's two one-tap links, Approve then Deny (ids), bound to the
// turn, its suspension and its pending calls' args hashes, and says until when they work:
// the link TTL, or the suspension's end if sooner. A link's token is s.token(id).
func (s *Issuer) pair(ctx context.Context, links agent.Links, turn steward.Turn) (ids [2]uuid.UUID, exp time.Time, err error) {
	calls := make([]steward.LinkCall, len(turn.State.Pending))
	for i, p := range turn.State.Pending {
		calls[i] = steward.LinkCall{CallID: p.CallID, ArgsHash: p.ArgsHash}
	}
	exp = s.Now.Now().Add(s.ttl())
	if turn.ExpiresAt.Before(exp) {
		exp = *turn.ExpiresAt
	}
	for i, approve := range []bool{true, false} {
		ids[i] = uuid.New()
		if err := links.Create(ctx, steward.NewLink{TurnID: turn.ID, Hash: auth.Hash(s.token(ids[i])), Approve: approve,
			Calls: calls, SuspendedUntil: *turn.ExpiresAt, ExpiresAt: exp}); err != nil {
			return ids, exp, err
		}
	}
	return ids, exp, nil
}

func (s *Issuer) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return DefaultTTL
}

// Page is what a link's confirmation page shows.
type Page struct {
	Approve bool
	Calls   []steward.PendingCall
	// ExpiresAt is when the link stops working.
	ExpiresAt time.Time
}

// Show reads a link for its confirmation page; it changes nothing. A link that cannot decide
// (unknown, forged, another's, used, expired, or its turn decided elsewhere) is a
// steward.Error whose message is the page to show.
func (s *Service) Show(ctx context.Context, token string) (Page, error) {
	_, _, page, err := s.find(ctx, token)
	return page, err
}

// Decide uses a link: the decision goes through the runner's exactly-once claim, and the
// link is marked used in the claim's transaction, or nothing changes.
func (s *Service) Decide(ctx context.Context, token string) (steward.View, error) {
	_, _, v, err := s.Press(ctx, token)
	return v, err
}

// Press is Decide for a button (internal/telegram's callback), also returning the link's owner
// (uuid.Nil when the token names no link) and the link: the one code path of the link pages
// and the buttons.
func (s *Service) Press(ctx context.Context, token string) (uuid.UUID, steward.Link, steward.View, error) {
	owner, link, _, err := s.find(ctx, token)
	if err != nil {
		return owner, link, steward.View{}, err
	}
	decisions := make([]steward.Decision, len(link.Calls))
	for i, c := range link.Calls {
		decisions[i] = steward.Decision{CallID: c.CallID, ArgsHash: c.ArgsHash, Approve: link.Approve}
	}
	h := auth.Hash(token)
	v, err := s.Confirmer.ConfirmWith(ctx, owner, link.TurnID, decisions, nil, func(ctx context.Context, tx agent.Tx) error {
		if err := tx.Links.Use(ctx, h, s.Now.Now()); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return errUsed
			}
			return err
		}
		return nil
	})
	switch {
	case err == nil:
		return owner, link, v, nil
	case steward.ErrorCode(err) == steward.CodeConflict:
		if errors.Is(err, errUsed) || errors.Is(err, errCancelled) {
			return owner, link, v, err
		}
		return owner, link, v, errDecided
	}
	return owner, link, v, err
}

// find checks a token and reads its link and turn in the owner's transaction.
func (s *Service) find(ctx context.Context, token string) (uuid.UUID, steward.Link, Page, error) {
	if len(token) != tokenLen {
		return uuid.Nil, steward.Link{}, Page{}, errUnknown
	}
	if _, err := base64.RawURLEncoding.DecodeString(token); err != nil {
		return uuid.Nil, steward.Link{}, Page{}, errUnknown
	}
	h := auth.Hash(token)
	owner, err := s.Door.LookupLinkOwner(ctx, h)
	if errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, steward.Link{}, Page{}, errUnknown
	}
	if err != nil {
		return uuid.Nil, steward.Link{}, Page{}, err
	}
	var link steward.Link
	var page Page
	err = s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		if link, err = tx.Links.Get(ctx, h); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return errUnknown
			}
			return err
		}
		now := s.Now.Now()
		switch {
		case link.UsedAt != nil:
			return errUsed
		case !now.Before(link.ExpiresAt):
			return errExpired
		}
		turn, err := tx.Turns.Get(ctx, link.TurnID)
		if errors.Is(err, store.ErrNotFound) || steward.ErrorCode(err) == steward.CodeNotFound {
			return errDecided
		}
		if err != nil {
			return err
		}
		if turn.Status == steward.StatusCancelled {
			return errCancelled
		}
		if !waiting(turn, link, now) {
			return errDecided
		}
		page = Page{Approve: link.Approve, Calls: turn.State.Pending, ExpiresAt: link.ExpiresAt}
		return nil
	})
	return owner, link, page, err
}

// waiting is true while the turn is in the very suspension the link was made for, with the
// same pending calls and args hashes.
func waiting(t steward.Turn, l steward.Link, now time.Time) bool {
	if t.Status != steward.StatusSuspended || t.ExpiresAt == nil || !now.Before(*t.ExpiresAt) || t.State == nil ||
		!t.ExpiresAt.Truncate(time.Microsecond).Equal(l.SuspendedUntil.Truncate(time.Microsecond)) ||
		len(t.State.Pending) != len(l.Calls) {
		return false
	}
	for i, p := range t.State.Pending {
		if p.CallID != l.Calls[i].CallID || p.ArgsHash != l.Calls[i].ArgsHash {
			return false
		}
	}
	return true
}

// placeholder starts a link's place in a stored notification: "[one-tap link <id>]".
const placeholder = "[one-tap link "

var placeholders = regexp.MustCompile(`\[one-tap link ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\]`)

// token is link id's token: HMAC-SHA256 under the key, in unpadded base64url (tokenLen).
func (s *Issuer) token(id uuid.UUID) string {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte("steward approval link "))
	m.Write(id[:])
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Hide replaces the link placeholders of a notification's text with a note that the link
// went to the owner's channel only: for showing a stored notification (the web app), where a
// live link must not appear.
func Hide(text string) string {
	return placeholders.ReplaceAllLiteralString(text, "(a one-tap link, sent to your channel only)")
}

// Expand replaces the link placeholders of a notification's text with the links, for the
// deliverer to send (internal/delivery's Expand); without a public URL or key it leaves them.
func (s *Issuer) Expand(text string) string {
	if s.PublicURL == "" || len(s.Key) == 0 {
		return text
	}
	return placeholders.ReplaceAllStringFunc(text, func(p string) string {
		id, err := uuid.Parse(placeholders.FindStringSubmatch(p)[1])
		if err != nil {
			return p
		}
		return s.url(id)
	})
}

// url is the one-tap link of link id: its page on the public URL.
func (s *Issuer) url(id uuid.UUID) string { return s.PublicURL + "/a/" + s.token(id) }

// buttonLine is a link's line in a stored notification: "Approve: [one-tap link <id>]".
var buttonLine = regexp.MustCompile(`(?m)^(Approve|Deny): \[one-tap link ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\]$`)

// choice is one link line of a stored notification: "Approve" or "Deny", and the link's id.
type choice struct {
	label string
	id    uuid.UUID
}

// choices are the link lines of a stored notification's text (at most four), in order.
func choices(text string) []choice {
	var out []choice
	for _, m := range buttonLine.FindAllStringSubmatch(text, 4) {
		if id, err := uuid.Parse(m[2]); err == nil {
			out = append(out, choice{label: m[1], id: id})
		}
	}
	return out
}

// Choice is one link of a suspension as a button carries it: Approve or Deny, and the link's
// token (derived as it is sent, never stored). internal/telegram makes the buttons.
type Choice struct {
	Approve bool
	Token   string
}

// Choices are the links of a stored notification's text, in order, for the deliverer to
// attach as buttons (telegram.Buttons). Without a key there are none.
func (s *Issuer) Choices(text string) []Choice {
	if len(s.Key) == 0 {
		return nil
	}
	var out []Choice
	for _, c := range choices(text) {
		out = append(out, Choice{Approve: c.label == "Approve", Token: s.token(c.id)})
	}
	return out
}

// TurnChoices are the Approve and Deny links of a suspended turn's pending calls, for an
// answer the deployment's bot sends to a linked chat (docs/ARCHITECTURE.md §19): a pair of
// one-tap links made now, bound like a notification's to the turn, the suspension and the
// calls' args hashes — the same single-use claim decides them. A turn no longer suspended,
// or no key, has none.
func (s *Service) TurnChoices(ctx context.Context, owner, turnID uuid.UUID) ([]Choice, error) {
	if len(s.Key) == 0 {
		return nil, nil
	}
	var out []Choice
	err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		turn, err := tx.Turns.Get(ctx, turnID)
		if err != nil {
			return err
		}
		if turn.Status != steward.StatusSuspended || turn.State == nil || len(turn.State.Pending) == 0 || turn.ExpiresAt == nil {
			return nil
		}
		ids, _, err := s.pair(ctx, tx.Links, turn)
		if err != nil {
			return err
		}
		out = []Choice{{Approve: true, Token: s.token(ids[0])}, {Approve: false, Token: s.token(ids[1])}}
		return nil
	})
	return out, err
}

// howLine is the stored notification's line saying how the links work, which a push
// notification's actions make moot.
var howLine = regexp.MustCompile(`(?m)^Each link opens a page to confirm; it works once, until .*$`)

// blankLines are the empty lines the removed lines leave.
var blankLines = regexp.MustCompile(`\n{3,}`)

// Actions are a Web Push notification's Approve and Deny (delivery.Deliverer.Actions): each
// carries its link's URL, which the service worker POSTs to when tapped (a GET never
// decides), and the text is the notification's without the link lines. Without a public URL
// or key the text is returned as it is (it then says why there are no links).
func (s *Issuer) Actions(text string) (string, []channel.Action) {
	if s.PublicURL == "" || len(s.Key) == 0 {
		return text, nil
	}
	var out []channel.Action
	for _, c := range choices(text) {
		out = append(out, channel.Action{Action: strings.ToLower(c.label), Title: c.label, URL: s.url(c.id)})
	}
	text = howLine.ReplaceAllString(buttonLine.ReplaceAllString(text, ""), "")
	return strings.TrimSpace(blankLines.ReplaceAllString(text, "\n\n")), out
}
