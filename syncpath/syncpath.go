// Package syncpath is the client's one path of records on a hub, for a
// user's own records (package syncrun) and a team's (package teamrun)
// alike. A record is sealed and signed when it is published
// (envelope.SealSigned: a user's own with the signing key of the sync
// key, a team's with its author's key) and verified and opened when it
// is pulled (envelope.VerifySigned, envelope.Open); a writer's records
// are read back a page at a time (Writer); and one that does not verify
// or apply is set aside (SetAside), said in one line with whose it is
// and why, while the writer's next records are applied: no record
// stops a sync. What each kind of record means, and what its signature
// is checked against, stays with its own package. See docs/sync.md and
// docs/team.md.
package syncpath

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/internal/human"
)

// SetAside is a record a sync did not apply: whose writer and index, its
// author ("" when it names none that verified), and why.
type SetAside struct {
	Host   string `json:"host"`
	Index  int64  `json:"index"`
	Author string `json:"author,omitempty"`
	Why    string `json:"why"`
}

// String is the record set aside in one line, as a team's sync says it
// ("no member" when no member of the chain wrote it).
func (a SetAside) String() string { return a.Line("no member") }

// Line is the record set aside in one line, nobody standing for the
// author when there is none.
func (a SetAside) Line(nobody string) string {
	who := nobody
	if a.Author != "" {
		who = a.Author
	}
	return fmt.Sprintf("writer %s, record %d (%s): set aside: %s", a.Host, a.Index, who, a.Why)
}

// MaxWhy bounds the reason a record set aside keeps.
const MaxWhy = 300

// Aside returns the record of host at index set aside for err, its
// reason cut at MaxWhy.
func Aside(host string, index int64, author string, err error) SetAside {
	return Clip(SetAside{Host: host, Index: index, Author: author, Why: err.Error()})
}

// Clip returns a with its reason cut at MaxWhy.
func Clip(a SetAside) SetAside {
	if len(a.Why) > MaxWhy {
		a.Why = strings.ToValidUTF8(a.Why[:MaxWhy], "") + "…"
	}
	return a
}

// MaxLines bounds the lines a sync says of the records it set aside:
// 2,000 junk writers make a summary, not 300 KB on every sync.
const MaxLines = 10

// Lines returns what a sync says of the records it set aside, one line
// each (those with an author first, whose junk then hides none of
// them), nobody standing for a missing author: the first MaxLines, one
// line for the rest, and a last line of how many.
func Lines(aside []SetAside, nobody string) []string {
	if len(aside) == 0 {
		return nil
	}
	sorted := AuthorsFirst(aside)
	var out []string
	for i, a := range sorted {
		if i == MaxLines {
			writers := map[string]bool{}
			for _, r := range sorted[i:] {
				writers[r.Host] = true
			}
			out = append(out, fmt.Sprintf("and %s of %s set aside", human.Plural(len(aside)-i, "more record"), human.Plural(len(writers), "writer")))
			break
		}
		out = append(out, loom.Truncate(a.Line(nobody), 300))
	}
	return append(out, fmt.Sprintf("%s set aside, not applied (the rest was)", human.Plural(len(aside), "record")))
}

// AuthorsFirst returns the records set aside, those with an author
// before those without, whose junk then hides none of them.
func AuthorsFirst(aside []SetAside) []SetAside {
	out := slices.Clone(aside)
	slices.SortStableFunc(out, func(a, b SetAside) int {
		switch {
		case a.Author != "" && b.Author == "":
			return -1
		case a.Author == "" && b.Author != "":
			return 1
		}
		return 0
	})
	return out
}

// Writer hands the records of writer host that sp holds after index
// after, up to index last, to each, a page of at most limit at a time,
// in index order. each returns the index it went up to (the next page is
// read after it) and whether to stop reading the writer (a record that
// waits, or is kept apart). Writer returns the index reached: short of
// last when each stopped, or the hub served no more.
func Writer(ctx context.Context, sp hub.Space, host string, after, last int64, limit int,
	each func(recs []loom.SyncRecord) (reached int64, stop bool, err error)) (int64, error) {
	for after < last {
		recs, more, err := sp.Records(ctx, host, after, limit)
		if err != nil || len(recs) == 0 {
			return after, err
		}
		reached, stop, err := each(recs)
		if err != nil || stop || !more || reached <= after {
			return max(after, reached), err
		}
		after = reached
	}
	return after, nil
}
