package claudecode

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/sqlite"
)

// bareLine is a line as other programs that write Claude Code's format
// write it (benchmark harnesses among them): no uuid, no parent.
func bareLine(sid string, sec int, text string) L {
	return L{"type": "user", "sessionId": sid, "timestamp": at(sec), "message": L{"role": "user", "content": text}}
}

const otherSID = "66666666-7777-8888-9999-000000000000"

// Lines without a uuid were "line-<n>" in every session, so a search,
// which keeps one hit per message, credited one session's line to
// another. Each session's are its own now, the same at every reading.
func TestLinesWithoutUUIDHaveIDsOfTheirSession(t *testing.T) {
	dir := t.TempDir()
	a := writeLines(t, filepath.Join(dir, "p", caseSID+".jsonl"),
		bareLine(caseSID, 0, "Caroline: hello"), bareLine(caseSID, 60, "Melanie: the pottery class was lovely"))
	b := writeLines(t, filepath.Join(dir, "p", otherSID+".jsonl"),
		bareLine(otherSID, 0, "Caroline: hi again"), bareLine(otherSID, 60, "Melanie: pottery again, a bowl this time"))
	ids := map[string]string{}
	for _, f := range []string{a, b} {
		res, again := read(t, f), read(t, f)
		for i, m := range res.Sessions[0].Messages {
			if again.Sessions[0].Messages[i].ID != m.ID {
				t.Errorf("%s: message %d is %q at one reading, %q at another", f, i+1, m.ID, again.Sessions[0].Messages[i].ID)
			}
			if other, ok := ids[m.ID]; ok {
				t.Errorf("message id %q is in %s and %s", m.ID, other, f)
			}
			ids[m.ID] = f
		}
	}
	st := importertest.Store(t)
	importertest.Import(t, st, New(), filepath.Join(dir, "p"))
	hits, err := st.Search(context.Background(), loom.SearchQuery{Text: "pottery", UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].SessionID == hits[1].SessionID || len(hits[0].AlsoIn)+len(hits[1].AlsoIn) > 0 {
		t.Errorf("pottery, said in two sessions: %+v", hits)
	}
}

// A store that an earlier reader filled holds those lines as
// "line-<n>": a re-import after the file grew adds the new line only,
// and keeps the ids stored.
func TestReimportKeepsEarlierLineIDs(t *testing.T) {
	dir := t.TempDir()
	path := writeLines(t, filepath.Join(dir, "p", caseSID+".jsonl"),
		bareLine(caseSID, 0, "Caroline: hello"), bareLine(caseSID, 60, "Melanie: the pottery class was lovely"))
	db := filepath.Join(t.TempDir(), "loom.db")
	st := storeAt(t, db)
	importertest.Import(t, st, New(), path)
	st.Close()
	w := importertest.SQLiteWriter(t, db)
	importertest.Exec(t, w, `UPDATE messages SET id = substr(id, instr(id, ':line-') + 1) WHERE id LIKE '%:line-%'`)
	importertest.Exec(t, w, `UPDATE bodies SET parts = replace(parts, ?, '"line-')`, `"`+caseSID+`:line-`)
	w.Close()
	st = storeAt(t, db)
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice"})
	if err != nil || len(ss) != 1 {
		t.Fatal(ss, err)
	}
	before := messageIDs(t, st, ss[0].ID)
	if strings.Join(before, " ") != "line-1 line-2" {
		t.Fatalf("the store as an earlier reader left it: %v", before)
	}
	importertest.NothingNew(t, st, New(), path)
	importertest.AppendLines(t, path, mustJSON(t, bareLine(caseSID, 120, "Caroline: I'd love to see the bowl")))
	rep := importertest.Import(t, st, New(), path)
	if rep.SessionsNew != 0 || rep.MessagesAdded != 1 {
		t.Fatalf("re-import after a line was added: %+v", rep)
	}
	after := messageIDs(t, st, ss[0].ID)
	if len(after) != 3 || after[0] != "line-1" || after[1] != "line-2" || after[2] != caseSID+":line-3" {
		t.Errorf("ids after the re-import: %v", after)
	}
	importertest.NothingNew(t, st, New(), path)
}

func storeAt(t *testing.T, path string) loom.Engine {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func messageIDs(t *testing.T, st loom.Store, id string) []string {
	t.Helper()
	msgs, err := st.Messages(context.Background(), id, loom.MessageQuery{Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.ID)
		for _, p := range m.Parts {
			if !strings.HasPrefix(p.ID, m.ID+"/") {
				t.Errorf("message %s has part %s", m.ID, p.ID)
			}
		}
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func read(t *testing.T, path string) *importer.Result {
	t.Helper()
	res, err := New().Read(context.Background(), importer.Bundle{Files: []string{path}})
	if err != nil || len(res.Sessions) != 1 {
		t.Fatalf("read %s: %v", path, err)
	}
	return res
}
