package sessionstore

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// importOf is the imported record of session sessionID holding the
// messages m1 to mn of one source.
func importOf(n int) *synclog.Imported {
	d := &loom.SessionData{Session: &loom.Session{ID: sessionID, UpdatedAt: t0}}
	for i := 1; i <= n; i++ {
		d.Messages = append(d.Messages, &loom.Message{ID: fmt.Sprintf("m%d", i), Seq: int64(i), CreatedAt: t0.Add(msAfter(i))})
	}
	return &synclog.Imported{Sessions: []*loom.SessionData{d}}
}

func TestImportAsAppend(t *testing.T) {
	p := importAsAppend(importOf(3).Sessions[0])
	if p.SessionID != sessionID || p.FirstSeq != 1 || p.PrevID != "" || len(p.Messages) != 3 || !p.At.Equal(t0.Add(msAfter(3))) {
		t.Fatalf("ImportAsAppend = %+v", p)
	}
	if p := importAsAppend(&loom.SessionData{Session: &loom.Session{ID: sessionID}}); p != nil {
		t.Fatalf("ImportAsAppend of no messages = %+v", p)
	}
	sa, sb := stampAt(10, hostA), stampAt(20, hostB)
	held := func(n int, s synclog.Stamp) AppendWindow {
		w := AppendWindow{Count: int64(n)}
		for i := 1; i <= n; i++ {
			w.Next = append(w.Next, Entry{ID: fmt.Sprintf("m%d", i), Stamp: s})
		}
		return w
	}
	for _, tc := range []struct {
		name string
		w    AppendWindow
		rec  *synclog.Imported
		want Plan
	}{
		{"a longer copy of what is here", held(8, sa), importOf(10), Plan{Action: appendAfter, Skip: 8}},
		{"a shorter copy", held(10, sa), importOf(8), Plan{Action: Applied, Skip: 8}},
		{"the same copy", held(10, sa), importOf(10), Plan{Action: Applied, Skip: 10}},
	} {
		if got := PlanAppend(tc.w, sb, importAsAppend(tc.rec.Sessions[0])); got != tc.want {
			t.Errorf("%s: PlanAppend = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// Copies of sources that differ: one continues in a conflict fork.
	other := importOf(4)
	other.Sessions[0].Messages[2].ID = "x3"
	if got := PlanAppend(held(4, sa), sb, importAsAppend(other.Sessions[0])); got.Action != ForkIncoming || got.At != 3 || got.Skip != 2 {
		t.Errorf("a copy that differs: PlanAppend = %+v", got)
	}
}

func msAfter(i int) time.Duration { return time.Duration(i) * time.Millisecond }

// Host A imports 10 messages of a source; host B imports 8 of them, and
// then the 4 the source grew by. In whichever order a host applies the
// three records (each host's in its own order), it holds one session of
// the 12 messages: nothing twice, no conflict fork.
func TestImportsOfOneSourceConverge(t *testing.T) {
	sa, sb1, sb2 := stampAt(10, hostA), stampAt(12, hostB), stampAt(30, hostB)
	grown := importOf(12).Sessions[0].Messages
	type rec struct {
		name string
		s    synclog.Stamp
		p    synclog.Payload
	}
	a := rec{"A imports 10", sa, importOf(10)}
	b1 := rec{"B imports 8", sb1, importOf(8)}
	b2 := rec{"B appends 4", sb2, &synclog.MessagesAppended{SessionID: sessionID, FirstSeq: 9, PrevID: "m8", Messages: grown[8:], At: t0}}
	for _, order := range [][]rec{{a, b1, b2}, {b1, a, b2}, {b1, b2, a}} {
		var names []string
		for _, r := range order {
			names = append(names, r.name)
		}
		name := strings.Join(names, ", ")
		var msgs []Entry // the session, nil while it is not here
		here := false
		for _, r := range order {
			var p *synclog.MessagesAppended
			switch q := r.p.(type) {
			case *synclog.Imported:
				if !here {
					here = true
					for _, m := range q.Sessions[0].Messages {
						msgs = append(msgs, Entry{ID: m.ID, Stamp: r.s})
					}
					continue
				}
				p = importAsAppend(q.Sessions[0])
			case *synclog.MessagesAppended:
				p = q
			}
			w := AppendWindow{Count: int64(len(msgs))}
			if p.FirstSeq > 1 && int(p.FirstSeq-1) <= len(msgs) {
				w.Prev = msgs[p.FirstSeq-2].ID
			}
			if int(p.FirstSeq) <= len(msgs) {
				w.Next = msgs[p.FirstSeq-1 : min(len(msgs), int(p.FirstSeq)-1+len(p.Messages))]
			}
			plan := PlanAppend(w, r.s, p)
			switch plan.Action {
			case Applied:
			case appendAfter:
				for _, m := range p.Messages[plan.Skip:] {
					msgs = append(msgs, Entry{ID: m.ID, Stamp: r.s})
				}
			default:
				t.Fatalf("order %s: %s planned %s", name, r.name, plan.Action)
			}
		}
		var ids []string
		for _, e := range msgs {
			ids = append(ids, e.ID)
		}
		want := []string{"m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11", "m12"}
		if !slices.Equal(ids, want) {
			t.Errorf("order %s: the session holds %v", name, ids)
		}
	}
}

// A row merged by rowChange has the fields newMeta gives it, and a later
// write of a field keeps it over an earlier row.
func TestRowChange(t *testing.T) {
	at := t0.Add(time.Hour)
	row := &loom.Session{ID: sessionID, Title: "T", Description: "D", Key: "claude-code:s1", Cwd: "/w", Model: "m",
		Provider: "p", Profile: "f", GitBranch: "main", Project: loom.Project{ID: "pid", Root: "/w", Name: "w"}, ArchivedAt: &at}
	sa, sb := stampAt(10, hostA), stampAt(20, hostB)
	var m Meta
	if !m.Apply(sa, rowChange(row), 0) || !reflect.DeepEqual(m, newMeta(row, sa)) {
		t.Fatalf("RowChange merged into nothing = %+v, want %+v", m, newMeta(row, sa))
	}
	title := "renamed"
	m.Apply(sb, &synclog.SessionChanged{SessionID: sessionID, Title: &title}, 0)
	other := *row
	other.Model = "m2"
	m.Apply(stampAt(15, hostB), rowChange(&other), 0)
	if m.Title.Value != "renamed" || m.Model.Value != "m2" {
		t.Errorf("after a later rename and a row between: title %q, model %q", m.Title.Value, m.Model.Value)
	}
}
