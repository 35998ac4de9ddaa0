package memory

import (
	"strings"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/store"
)

// MaxChunkRunes caps a chunk's text: well inside the embedding model's input limit
// (2,048 tokens for gemini-embedding-001), small enough to quote in a memory block.
const MaxChunkRunes = 1500

// exchange is what a finished turn adds to memory: the turn's message and the final answer.
// Tool calls and their results are not remembered: they are where injected text lives, and
// the answer already says what came of them.
type exchange struct {
	user, answer string
	// from is who wrote the message (a store.Origin* constant), from the turn's trigger:
	// only a chat or CLI turn's message is the owner's own words.
	from string
	// origin is the chunks' origin: from, unless the turn was tainted (it read outside
	// content, whose words its answer may repeat): then store.OriginTool, untrusted
	// (docs/ARCHITECTURE.md §3).
	origin string
}

// tainted says the turn read outside content: its exchange is untrusted.
func (ex exchange) tainted() bool { return ex.origin == store.OriginTool }

// originsOf are the message's author and the chunks' origin of a turn (exchange.from and
// exchange.origin).
func originsOf(turn steward.Turn) (from, origin string) {
	from = originOf(turn.Trigger)
	if turn.Taint != "" && store.Trusted(from) {
		return from, store.OriginTool
	}
	return from, from
}

// originOf is the origin of a turn's message, by its trigger; an unknown trigger is
// untrusted.
func originOf(trigger steward.Trigger) string {
	switch trigger {
	case steward.TriggerChat, steward.TriggerCLI:
		return store.OriginOwner
	case steward.TriggerSchedule:
		return store.OriginSchedule
	}
	return store.OriginWebhook
}

// label is how the message is introduced in a chunk: never as the owner's unless it is.
func (ex exchange) label() string {
	switch ex.from {
	case store.OriginOwner:
		return "Owner"
	case store.OriginSchedule:
		return "Scheduled job"
	}
	return "Webhook event (untrusted)"
}

// exchangeOf finds a turn's exchange among its conversation's messages: the turn's first
// user text and its last model text, as their authors wrote them (steward.Message.Text: no
// thoughts, no context parts).
func exchangeOf(msgs []steward.StoredMessage, turnID uuid.UUID) exchange {
	var ex exchange
	for _, m := range msgs {
		if m.TurnID != turnID {
			continue
		}
		text := strings.TrimSpace(m.Message.Text())
		switch {
		case text == "":
		case m.Message.Role == steward.RoleUser && ex.user == "":
			ex.user = text
		case m.Message.Role == steward.RoleModel:
			ex.answer = text
		}
	}
	return ex
}

// chunks splits the exchange into chunk texts: one "Owner: …\nSteward: …" chunk (the message
// labelled by its origin) when it fits in MaxChunkRunes, otherwise each side split on its
// own, every piece labelled. Every chunk takes the exchange's origin: the answer to an
// untrusted message may repeat it.
func (ex exchange) chunks() []string {
	who := "Steward"
	if ex.tainted() {
		who = "Steward (after reading outside content)"
	}
	user, answer := ex.label()+": "+ex.user, who+": "+ex.answer
	switch {
	case ex.user == "" && ex.answer == "":
		return nil
	case ex.answer == "":
		return splitText(user, MaxChunkRunes)
	case ex.user == "":
		return splitText(answer, MaxChunkRunes)
	case utf8.RuneCountInString(user)+1+utf8.RuneCountInString(answer) <= MaxChunkRunes:
		return []string{user + "\n" + answer}
	}
	return append(splitText(user, MaxChunkRunes), splitText(answer, MaxChunkRunes)...)
}

// splitText cuts s into pieces of at most n runes, at the last paragraph break, else line
// break, else sentence end, else space in the second half of each piece; a piece with none
// is cut hard. Pieces after the first keep s's label ("Owner:", "Steward:") with "(cont.)".
func splitText(s string, n int) []string {
	label := ""
	if i := strings.Index(s, ": "); i > 0 && i < 45 {
		label = s[:i] + " (cont.): "
	}
	var out []string
	for {
		s = strings.TrimSpace(s)
		if s == "" {
			return out
		}
		if utf8.RuneCountInString(s) <= n {
			return append(out, s)
		}
		head := cutRunes(s, n-utf8.RuneCountInString(label))
		cut := len(head)
		for _, sep := range []string{"\n\n", "\n", ". ", "? ", "! ", " "} {
			if i := strings.LastIndex(head, sep); i >= len(head)/2 {
				cut = i + len(sep)
				break
			}
		}
		out = append(out, strings.TrimSpace(s[:cut]))
		s = label + strings.TrimSpace(s[cut:])
	}
}
