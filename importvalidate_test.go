package loom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Ids of importable: a session, its messages, and another session.
const (
	s1 = "0196a3b2-0000-7000-8000-000000000001"
	s2 = "0196a3b2-0000-7000-8000-000000000002"
	m1 = "0196a3b2-0000-7000-8000-0000000000a1"
	m2 = "0196a3b2-0000-7000-8000-0000000000a2"
	m3 = "0196a3b2-0000-7000-8000-0000000000a3"
)

func importable() *loom.SessionData {
	at := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	msg := func(id string, seq int64, role string) *loom.Message {
		return &loom.Message{ID: id, Seq: seq, Role: role, CreatedAt: at, Parts: []loom.Part{{ID: id + "-p", Type: loom.PartText, Text: id}}}
	}
	return &loom.SessionData{
		Session:  &loom.Session{ID: s1, UserID: "alice", Key: "telegram:42", CreatedAt: at, UpdatedAt: at},
		Messages: []*loom.Message{msg(m1, 1, loom.RoleUser), msg(m2, 2, loom.RoleAssistant), msg(m3, 3, loom.RoleUser)},
	}
}

func TestSessionDataValidateCompletes(t *testing.T) {
	d := importable()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if s := d.Session; s.Kind != loom.KindMain || s.Surface != "telegram" {
		t.Fatalf("kind %q, surface %q", s.Kind, s.Surface)
	}
	for i, turn := range []int{1, 1, 2} {
		if m := d.Messages[i]; m.SessionID != s1 || m.Turn != turn {
			t.Fatalf("message %d: session %q, turn %d", i+1, m.SessionID, m.Turn)
		}
	}
}

func TestSessionDataValidateRefuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(d *loom.SessionData)
		want   string
	}{
		{"no session", func(d *loom.SessionData) { d.Session = nil }, "session record without a session"},
		{"blank id", func(d *loom.SessionData) { d.Session.ID = " " }, "session has no id"},
		{"no user", func(d *loom.SessionData) { d.Session.UserID = "" }, "session " + s1 + ": session user required"},
		{"unknown kind", func(d *loom.SessionData) { d.Session.Kind = "clone" }, "session " + s1 + `: unknown session kind "clone"`},
		{"orphan sub-agent", func(d *loom.SessionData) { d.Session.Kind = loom.KindSubagent }, "session " + s1 + ": a sub-agent session needs a parent"},
		{"no times", func(d *loom.SessionData) { d.Session.UpdatedAt = time.Time{} }, "session " + s1 + ": created_at and updated_at are required"},
		{"nil message", func(d *loom.SessionData) { d.Messages[1] = nil }, "session " + s1 + ": message 2 is empty"},
		{"other session", func(d *loom.SessionData) { d.Messages[1].SessionID = s2 }, "session " + s1 + ": message 2 belongs to session " + s2 + ", but follows session " + s1},
		{"seq gap", func(d *loom.SessionData) { d.Messages[2].Seq = 4 }, "session " + s1 + ": message has seq 4, want 3"},
		{"no message id", func(d *loom.SessionData) { d.Messages[0].ID = "" }, "session " + s1 + ": message 1 has no id"},
		{"no created_at", func(d *loom.SessionData) { d.Messages[0].CreatedAt = time.Time{} }, "session " + s1 + ": message 1 has no created_at"},
		{"bad role", func(d *loom.SessionData) { d.Messages[0].Role = "robot" }, "session " + s1 + `: message 1: unknown message role "robot"`},
		{"part without id", func(d *loom.SessionData) { d.Messages[2].Parts[0].ID = "" }, "session " + s1 + ": message 3 has a part without an id"},
		// Ids name files and pages: a session's id is a UUID, as loom
		// makes them, never a path or another spelling of one.
		{"path as id", func(d *loom.SessionData) { d.Session.ID = "../../etc/passwd" }, `session id "../../etc/passwd" is not a UUID`},
		{"upper-case id", func(d *loom.SessionData) { d.Session.ID = strings.ToUpper(s1) }, "is not a UUID"},
		{"braced id", func(d *loom.SessionData) { d.Session.ID = "{" + s1 + "}" }, "is not a UUID"},
		{"path as parent", func(d *loom.SessionData) { d.Session.Kind, d.Session.ParentID = loom.KindFork, "../x" }, `parent id "../x" is not a UUID`},
		{"bad key", func(d *loom.SessionData) { d.Session.Key = "no surface" }, "must be SURFACE:NAME"},
		// loom makes the ids of its own sessions' messages.
		{"message id not a UUID", func(d *loom.SessionData) { d.Messages[1].ID = "../m2" }, `message 2 has id "../m2", not a UUID`},
		// Other tools' ids are kept, but as one line of text.
		{"control in a foreign id", func(d *loom.SessionData) {
			d.Session.Source = &loom.Source{Tool: "codex"}
			d.Messages[1].ID = "m\x1b]0;x\x07"
		}, `message 2: id "m\x1b]0;x\a" holds a control character`},
		{"control in a part id", func(d *loom.SessionData) { d.Messages[1].Parts[0].ID = "p\n2" }, `message 2: part id "p\n2" holds a control character`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := importable()
			tc.change(d)
			err := d.Validate()
			if loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(loom.ErrorMessage(err), tc.want) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
			if err := loom.ValidateImport([]*loom.SessionData{d}); loom.ErrorCode(err) != loom.EINVALID {
				t.Fatalf("ValidateImport = %v", err)
			}
		})
	}
}

func TestValidateImportRefusesASessionTwice(t *testing.T) {
	err := loom.ValidateImport([]*loom.SessionData{importable(), importable()})
	if loom.ErrorMessage(err) != "session "+s1+" appears twice" {
		t.Fatalf("ValidateImport = %v", err)
	}
	if err := loom.ValidateImport([]*loom.SessionData{importable(), nil}); loom.ErrorMessage(err) != "record 2 has no session" {
		t.Fatalf("ValidateImport = %v", err)
	}
}

// A session from another tool keeps its messages' ids, which need not
// be UUIDs; so do forks and sub-agents, whose messages may have been
// copied from one.
func TestSessionDataValidateKeepsForeignMessageIDs(t *testing.T) {
	for _, change := range []func(s *loom.Session){
		func(s *loom.Session) { s.Source = &loom.Source{Tool: "opencode"} },
		func(s *loom.Session) { s.Kind, s.ParentID = loom.KindFork, s2 },
	} {
		d := importable()
		change(d.Session)
		d.Messages[0].ID, d.Messages[1].ID = "msg_01JABC", "f81d4fae/1"
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}
