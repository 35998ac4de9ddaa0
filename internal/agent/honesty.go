package agent

import (
	"context"
	"regexp"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
)

// EventUnverifiedClaim is the audit event of a completed turn whose answer claims an action
// ("I added…", "I sent…") while the turn's call journal shows no write executed: the honesty
// check. It flags, it does not rewrite the answer; the evals count it.
const EventUnverifiedClaim = "unverified_claim"

// claimRE matches a first-person claim of a done action: "I added", "I've scheduled",
// "I have just sent". Negations ("I have not added", "I didn't add") and offers ("I can add")
// do not match: the verb must follow the subject directly, in the past tense.
var claimRE = regexp.MustCompile(`(?i)\bI(?:\s+have|'ve|’ve)?(?:\s+(?:just|now|also|already))?\s+` +
	`(added|created|sent|saved|scheduled|recorded|removed|deleted|updated|booked|cancel+ed|` +
	`completed|marked|stored|set up|emailed|forwarded|posted|paid|logged|noted down|remembered|imported)\b`)

// Claims returns the action claims of an answer, as written ("I added", "I've sent"), in order.
func Claims(answer string) []string {
	var out []string
	for _, m := range claimRE.FindAllString(answer, -1) {
		out = append(out, strings.Join(strings.Fields(m), " "))
	}
	return out
}

// checkHonesty records EventUnverifiedClaim when the answer claims an action and the turn's
// journal shows no write that succeeded (every call of the turn, across its resumes).
func (r *Runner) checkHonesty(ctx context.Context, tx Tx, x *run, answer string) error {
	claims := Claims(answer)
	if len(claims) == 0 {
		return nil
	}
	calls, err := tx.Journal.Calls(ctx, x.turn.ID)
	if err != nil {
		return err
	}
	executed := 0
	for _, c := range calls {
		if c.Kind == steward.KindWrite && c.Status == steward.CallSucceeded {
			executed++
		}
	}
	if executed == 0 {
		x.record(EventUnverifiedClaim, map[string]any{"claims": claims, "calls": len(calls),
			"reason": "the answer claims an action but no write was executed in this turn"})
	}
	return nil
}

// writesDone words the writes this turn executed ("Created task “X”."), for a turn that then
// failed: "" when none was.
func (r *Runner) writesDone(ctx context.Context, tx Tx, x *run) (string, error) {
	calls, err := tx.Journal.Calls(ctx, x.turn.ID)
	if err != nil {
		return "", err
	}
	var done []string
	for _, c := range calls {
		if c.Kind == steward.KindWrite && c.Status == steward.CallSucceeded {
			done = append(done, strings.TrimSuffix(r.Tools.SayResult(c.Tool, c.Args, c.Result, false), ".")+".")
		}
	}
	if len(done) == 0 {
		return "", nil
	}
	return "Done before this failure: " + strings.Join(done, " "), nil
}
