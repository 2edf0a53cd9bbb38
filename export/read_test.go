package export_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/export"
)

func TestReadRefusesBadRecords(t *testing.T) {
	good := strings.Split(strings.TrimSpace(write(t, export.JSONL, sample()[:1])), "\n")
	session, msg := good[0], good[1]
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"empty", " \n", "x: empty file"},
		{"not an export", "\n hello", "x:2: not a loom export"},
		{"not JSON", session + "\n" + `{"type":"message","message":{"id":}`, "x:2: invalid JSON"},
		{"cut short", session + "\n" + msg[:len(msg)/2], "x:2: unexpected end of JSON"},
		{"two values", session + " {}", "x:1: more than one JSON value"},
		{"unknown field", `{"type":"note","text":"hi"}`, `x:1: unknown field "text"`},
		{"unknown type", `{"type":"note"}`, `x:1: unknown record type "note"`},
		{"no type", `{"type":""}`, "x:1: record has no type"},
		{"no session", `{"type":"session"}`, "x:1: session: missing"},
		{"null session", `{"type":"session","session":null}`, "x:1: session record without a session"},
		{"message first", "\n\n" + msg, "x:3: message before any session record"},
		{"null message", session + "\n" + `{"type":"message","message":null}`, "x:2: message 1 is empty"},
		{"session twice", session + "\n" + session, "x:2: session 0196a3b2-0000-7000-8000-000000000001 appears twice (first on line 1)"},
		{"path as id", strings.Replace(session, `"id":"0196a3b2-0000-7000-8000-000000000001"`, `"id":"../../etc/passwd"`, 1), `x:1: session id "../../etc/passwd" is not a UUID`},
		{"message id not a UUID", session + "\n" + strings.Replace(msg, `"id":"0196a3b2-0000-7000-8000-0000000000a1"`, `"id":"../m1"`, 1), `x:2: message 1 has id "../m1", not a UUID`},
		{"no session id", strings.Replace(session, `"id":"0196a3b2-0000-7000-8000-000000000001"`, `"id":" "`, 1), "x:1: session has no id"},
		{"unknown kind", strings.Replace(session, `"kind":"main"`, `"kind":"clone"`, 1), `unknown session kind "clone"`},
		{"no created_at", strings.Replace(session, `"created_at":"2025-05-01T10:00:00.000Z"`, `"created_at":"0001-01-01T00:00:00Z"`, 1), "created_at and updated_at are required"},
		{"seq gap", session + "\n" + strings.Replace(msg, `"seq":1`, `"seq":5`, 1), "x:2: message has seq 5, want 1"},
		{"wrong field type", session + "\n" + strings.Replace(msg, `"seq":1`, `"seq":"one"`, 1), "x:2: message: seq should be int64"},
		{"bad role", session + "\n" + strings.Replace(msg, `"role":"user"`, `"role":"robot"`, 1), `x:2: message 1: unknown message role "robot"`},
		{"message id twice", strings.Join(good[:2], "\n") + "\n" + strings.Replace(good[2], `"id":"0196a3b2-0000-7000-8000-0000000000a2"`, `"id":"0196a3b2-0000-7000-8000-0000000000a1"`, 1), "x:3: message id 0196a3b2-0000-7000-8000-0000000000a1 appears twice (first on line 2)"},
		{"other session", session + "\n" + strings.Replace(msg, `"session_id":"0196a3b2-0000-7000-8000-000000000001"`, `"session_id":"s9"`, 1), "x:2: message 1 belongs to session s9"},
		{"part without id", session + "\n" + strings.Replace(msg, `"id":"0196a3b2-0000-7000-8000-0000000000a1-p",`, "", 1), "x:2: message 1 has a part without an id"},
		{"doc version", `{"version":2,"sessions":[]}`, "x:1: unsupported export version 2"},
		{"doc without version", `{"sessions":[]}`, "x: not a loom export: no version"},
		{"doc without sessions", `{"version":1,"sessions":[]}`, "x: no sessions in the file"},
		{"doc field", "{\n\"version\":1,\n\"extra\":1}", `x:3: unknown field "extra"`},
		{"doc messages first", "{\"version\":1,\"sessions\":[\n{\"messages\":[]}]}", "x:2: messages must follow their session"},
		{"doc trailing data", `{"version":1,"sessions":[{"session":` + session[len(`{"type":"session","session":`):len(session)-1] + `}]} {}`, "x:1: unexpected data after the document"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := export.Read(strings.NewReader(tc.content), export.ReadOptions{Name: "x"})
			if err == nil || data != nil {
				t.Fatalf("read %d sessions, err %v", len(data), err)
			}
			if loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q (%s), want %q", err, loom.ErrorCode(err), tc.want)
			}
		})
	}
}

func TestReadNamesTheDocumentLine(t *testing.T) {
	doc := write(t, export.JSON, sample()[:1])
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if strings.Contains(l, `"role": "assistant"`) {
			lines[i] = strings.Replace(l, "assistant", "robot", 1)
			// The message starts a few lines above its role.
			start := i + 1
			for !strings.HasSuffix(strings.TrimSpace(lines[start-1]), "{") {
				start--
			}
			_, err := export.Read(strings.NewReader(strings.Join(lines, "\n")), export.ReadOptions{Name: "x"})
			if want := "x:" + strconv.Itoa(start) + ": message 2: unknown message role"; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, want)
			}
			return
		}
	}
	t.Fatal("no assistant message in the json export")
}

func TestReadFailsWithTheReader(t *testing.T) {
	_, err := export.Read(iotest.ErrReader(errors.New("disk on fire")), export.ReadOptions{Name: "x"})
	if err == nil || err.Error() != "read x: disk on fire" {
		t.Fatalf("error %v", err)
	}
}

// A fork or sub-agent session comes with its parent, or its parent is
// where the import goes (Parent says so); else it is refused with its
// line. The parent may come anywhere in the file.
func TestReadRefusesAnOrphan(t *testing.T) {
	data := sample()
	parent, child := data[0].Session.ID, data[1].Session.ID
	orphan := write(t, export.JSONL, data[1:])
	_, err := export.Read(strings.NewReader(orphan), export.ReadOptions{Name: "x"})
	want := "x:1: session " + child + " is a sub-agent session of session " + parent + ", which is neither in the file nor in the store"
	if loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	_, err = export.Read(strings.NewReader(orphan), export.ReadOptions{Name: "x", Parent: func(id string) (bool, error) { return false, nil }})
	if !strings.Contains(fmt.Sprint(err), want) {
		t.Fatalf("parent not found: error %v", err)
	}
	asked := ""
	got, err := export.Read(strings.NewReader(orphan), export.ReadOptions{Name: "x", Parent: func(id string) (bool, error) { asked = id; return true, nil }})
	if err != nil || len(got) != 1 || asked != parent {
		t.Fatalf("parent in the store: %v (%d sessions, asked for %q)", err, len(got), asked)
	}
	_, err = export.Read(strings.NewReader(orphan), export.ReadOptions{Name: "x", Parent: func(id string) (bool, error) { return false, errors.New("store down") }})
	if err == nil || !strings.Contains(err.Error(), "store down") {
		t.Fatalf("store error: %v", err)
	}
	// Child first, parent after: both in the file.
	if _, err := export.Read(strings.NewReader(write(t, export.JSONL, []*loom.SessionData{data[1], data[0]})), export.ReadOptions{Name: "x"}); err != nil {
		t.Fatal(err)
	}
}

// A fork holds its parent's messages themselves: the same message id in
// two sessions of a file is read, in one session it is refused.
func TestReadForkSharesIDs(t *testing.T) {
	data := sample()[:1]
	parent := data[0]
	fork := &loom.Session{ID: "0196a3b2-0000-7000-8000-000000000003", UserID: "local", Kind: loom.KindFork, ParentID: parent.Session.ID,
		ForkTurn: 1, CreatedAt: at(7), UpdatedAt: at(7)}
	var msgs []*loom.Message
	for _, m := range parent.Messages[:2] {
		c := *m
		c.SessionID = fork.ID
		msgs = append(msgs, &c)
	}
	data = append(data, &loom.SessionData{Session: fork, Messages: msgs})
	got, err := export.Read(strings.NewReader(write(t, export.JSONL, data)), export.ReadOptions{Name: "x"})
	if err != nil || len(got) != 2 || got[1].Messages[0].ID != parent.Messages[0].ID {
		t.Fatalf("a fork with its parent's message ids: %d sessions, %v", len(got), err)
	}
}
