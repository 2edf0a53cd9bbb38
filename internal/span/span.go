// Package span is how a session's messages are found among stored rows
// when sessions share them: a fork reads its parent's rows, a rewound
// session keeps reading the rows it wrote before. It is a rule of the
// store, used by its writes (package sessionstore) and by every engine's
// reads (SQLite, PostgreSQL and the one in memory), and holds no SQL.
package span

import "math"

// Span is a range of a session's messages and where their rows are
// stored: messages First to Last of the session are the rows of the same
// seq stored under RowsOf (the messages table's session_id, the spans
// table's store_id). A session's spans cover its messages from 1 without
// gaps or overlaps, in order; the last one has no end (Last is
// OpenSeq), and its RowsOf is where the session's new messages go.
//
// A session that was never forked nor rewound has one span, stored under
// its own id. A fork reads the messages it inherits from its parent's
// rows, through the parent's spans, so forking copies nothing: a fork of
// a fork has one span for each ancestor it reads from. A rewound session
// keeps reading what it keeps from the rows it wrote before and stores
// what follows under a new id, so the rows its fork takes stay where they
// are.
type Span struct {
	First, Last int64
	RowsOf      string
}

// OpenSeq is the Last of a session's last span: the range it appends to
// has no end.
const OpenSeq int64 = math.MaxInt64

// OwnStore returns where a session with spans stores its new messages:
// the store of its last span.
func OwnStore(spans []Span) string {
	if len(spans) == 0 {
		return ""
	}
	return spans[len(spans)-1].RowsOf
}

// Inherit returns the spans of a session that reads messages 1 to
// upTo of the session with spans from, as they are stored, and stores
// its own messages, upTo+1 on, under own: the spans of a fork at upTo,
// and of a rewound session that keeps upTo.
func Inherit(from []Span, upTo int64, own string) []Span {
	var out []Span
	for _, sp := range from {
		if sp.First > upTo {
			break
		}
		sp.Last = min(sp.Last, upTo)
		out = append(out, sp)
	}
	return joinSpans(append(out, Span{First: upTo + 1, Last: OpenSeq, RowsOf: own}))
}

// Of returns the span that holds message seq, false when none does.
func Of(spans []Span, seq int64) (Span, bool) {
	for _, sp := range spans {
		if sp.First <= seq && seq <= sp.Last {
			return sp, true
		}
	}
	return Span{}, false
}

// CopyOnWrite returns the spans of a session after its message seq,
// which it inherits, has been copied to where it stores its own: a
// write to an inherited message changes a copy, never the row another
// session reads.
func CopyOnWrite(spans []Span, seq int64) []Span {
	own := OwnStore(spans)
	out := make([]Span, 0, len(spans)+2)
	for _, sp := range spans {
		if sp.First > seq || seq > sp.Last {
			out = append(out, sp)
			continue
		}
		out = append(out,
			Span{First: sp.First, Last: seq - 1, RowsOf: sp.RowsOf},
			Span{First: seq, Last: seq, RowsOf: own},
			Span{First: seq + 1, Last: sp.Last, RowsOf: sp.RowsOf})
	}
	return joinSpans(out)
}

// joinSpans drops empty spans and joins neighbours stored under the same
// store, so a session has as few spans as its history needs.
func joinSpans(spans []Span) []Span {
	out := spans[:0:0]
	for _, sp := range spans {
		switch n := len(out); {
		case sp.First > sp.Last:
		case n > 0 && out[n-1].RowsOf == sp.RowsOf && out[n-1].Last+1 == sp.First:
			out[n-1].Last = sp.Last
		default:
			out = append(out, sp)
		}
	}
	return out
}
