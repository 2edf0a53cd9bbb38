package secrets

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	sec "github.com/loomhq/loom/secrets"
)

// partChange is one part to store again, redacted.
type partChange struct {
	seq  int64
	part loom.Part
	// meta, when set, is a change of the session's title and
	// description instead.
	meta *loom.SessionUpdate
	n    int
}

// sessionPlan is what redacting one session changes: its parts (and
// title) redacted, where its secrets are, and how many of those
// replaced are repeats of a secret found elsewhere (echoes).
type sessionPlan struct {
	changes []partChange
	places  []sec.Place
	echoes  int
}

// Bounds on the repeats a redaction replaces beyond the session a value
// was found in (see sec.Echoes).
const (
	// runEchoes is how many literals of the values found in every
	// session a run keeps, to replace them in the others: about 50 MB
	// of automata at most.
	runEchoes = 4096
	// echoHits is how many messages the search for one value reads.
	echoHits = 10000
)

// plan returns the parts of session id that hold secrets, redacted, and
// where the secrets are. A value the detector finds in the session is
// replaced wherever else it appears in it too, before the place that
// gave it away as well as after, and so are run's, found in the run's
// other sessions. It returns the session's values too.
func plan(ctx context.Context, st loom.Store, d *sec.Detector, id string, run *sec.Echoes) (*sessionPlan, *sec.Echoes, error) {
	s, err := st.Session(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	msgs, err := st.Messages(ctx, id, loom.MessageQuery{})
	if err != nil {
		return nil, nil, err
	}
	own := d.Echoes(0, run)
	p := &sessionPlan{}
	// First the detector over every text, which keeps the values it
	// finds; then their repeats, wherever they are.
	type partAt struct {
		seq int64
		red loom.Part
		n   int
	}
	title, a := own.Redact(s.Title)
	desc, b := own.Redact(s.Description)
	var parts []partAt
	reds := make([]*loom.Message, len(msgs))
	for i, m := range msgs {
		c := *m
		c.Parts = make([]loom.Part, len(m.Parts))
		for k, part := range m.Parts {
			var n int
			c.Parts[k], n = own.RedactPart(part)
			parts = append(parts, partAt{seq: m.Seq, red: c.Parts[k], n: n})
		}
		reds[i] = &c
		p.places = append(p.places, d.ScanMessage(m)...)
	}
	// The title and description, which listings show, are the
	// session's row: one change of seq 0.
	for _, f := range []struct{ name, text, red string }{{"title", s.Title, title}, {"description", s.Description, desc}} {
		for _, x := range d.Find(f.text) {
			p.places = append(p.places, sec.Place{Part: -1, Field: f.name, RuleID: x.RuleID, Hint: sec.Hint(f.text[x.Start:x.End]), ID: x.ID})
		}
		for _, x := range own.Find(f.red) {
			p.places = append(p.places, sec.Place{Part: -1, Field: f.name, RuleID: x.RuleID, Hint: sec.Hint(f.red[x.Start:x.End]), ID: x.ID, Echo: true})
		}
	}
	title, ea := own.Replace(title)
	desc, eb := own.Replace(desc)
	if n := a + b + ea + eb; n > 0 {
		p.changes = append(p.changes, partChange{meta: &loom.SessionUpdate{Title: &title, Description: &desc}, n: n})
		p.echoes += ea + eb
	}
	for _, m := range reds {
		p.places = append(p.places, own.ScanMessage(m)...)
	}
	for _, at := range parts {
		red, k := own.ReplacePart(at.red)
		if at.n+k > 0 {
			p.changes = append(p.changes, partChange{seq: at.seq, part: red, n: at.n + k})
			p.echoes += k
		}
	}
	return p, own, nil
}

// echoedIn returns the sessions of user whose messages the search index
// finds one of values in: where a value found in one session may be
// repeated in another out of sight of the rules. The index finds
// candidates; the literal pass over them decides.
func echoedIn(ctx context.Context, st loom.Store, user string, values []string) (map[string]bool, error) {
	ids := map[string]bool{}
	for _, v := range values {
		// The value's words, as a phrase: the index holds words.
		var words []string
		size := 0
		for _, w := range loom.Words(v) {
			if len(words) == 8 || size+len(w) > loom.MaxQueryBytes-16 {
				break
			}
			words, size = append(words, w), size+len(w)+1
		}
		if len(words) == 0 {
			continue
		}
		q := `"` + strings.Join(words, " ") + `"`
		hits, err := st.Search(ctx, loom.SearchQuery{Text: q, UserID: user, Archived: true, Exact: true, Limit: echoHits})
		if loom.ErrorCode(err) == loom.EINVALID {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("search the store for repeats of the secrets found: %w", err)
		}
		for _, h := range hits {
			ids[h.SessionID] = true
			for _, o := range h.AlsoIn {
				ids[o] = true
			}
		}
	}
	return ids, nil
}

// planRun plans the redaction of sessions: each session's secrets and
// their repeats in it, then the repeats of every value found in any
// session of the run wherever the store holds them (echoedIn), in the
// sessions given and in others of the user's, which it adds. It
// returns the sessions to redact, oldest first, with their plans, every
// session it looked at, and the run's values.
func planRun(ctx context.Context, st loom.Store, d *sec.Detector, user string, sessions []*loom.Session) ([]*loom.Session, map[string]*sessionPlan, []*loom.Session, *sec.Echoes, error) {
	run := d.Echoes(runEchoes)
	plans := map[string]*sessionPlan{}
	for _, s := range sessions {
		p, own, err := plan(ctx, st, d, s.ID, run)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		plans[s.ID] = p
		run.Merge(own)
		run.Trim()
	}
	looked := slices.Clone(sessions)
	if run.Len() > 0 {
		others, err := echoedIn(ctx, st, user, run.Values())
		if err != nil {
			return nil, nil, nil, nil, err
		}
		for _, id := range slices.Sorted(maps.Keys(others)) {
			if _, ok := plans[id]; !ok {
				s, err := st.Session(ctx, id)
				if loom.ErrorCode(err) == loom.ENOTFOUND {
					continue
				}
				if err != nil {
					return nil, nil, nil, nil, err
				}
				looked = append(looked, s)
			}
			p, _, err := plan(ctx, st, d, id, run)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			plans[id] = p
		}
	}
	slices.SortStableFunc(looked, func(a, b *loom.Session) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	var todo []*loom.Session
	for _, s := range looked {
		if len(plans[s.ID].changes) > 0 {
			todo = append(todo, s)
		}
	}
	return todo, plans, looked, run, nil
}
