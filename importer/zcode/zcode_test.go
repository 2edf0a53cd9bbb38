package zcode

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// The session: its system prompt, the prompt, the reply that thinks,
// says and reads (its call completed by the result the next user
// message carries, which adds no message), the reply that reasons,
// edits (completed in its part's state), runs the tests (failed) and
// answers; each model call's tokens on the reply made by its end; the
// model named either way.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, "testdata", 2, "ses_zc1", "system user assistant assistant")
	if s.Title != "Fix the login bug" || s.Cwd != "/home/u/auth" || s.Model != "glm-4.6" || s.CreatedAt.UnixMilli() != 1791200000000 {
		t.Fatalf("session %q %q %q %v", s.Title, s.Cwd, s.Model, s.CreatedAt)
	}
	p := s.Messages[2].Parts
	if len(p) != 3 || p[0].Type != loom.PartReasoning || p[2].Name != "Read" || p[2].Status != loom.ToolCompleted || !strings.Contains(string(p[2].Output), "t.Expiry.Before") {
		t.Fatalf("first reply %+v", p)
	}
	p = s.Messages[3].Parts
	if len(p) != 4 || p[1].Name != "Edit" || p[1].Status != loom.ToolCompleted || string(p[1].Output) != `"applied 1 edit"` ||
		p[2].Status != loom.ToolError || p[2].Error != "permission denied" || p[3].Type != loom.PartText {
		t.Fatalf("second reply %+v", p)
	}
	if u := s.Messages[2].Usage; u.InputTokens != 2100 || u.CacheReadTokens != 1500 || u.APICalls != 1 {
		t.Errorf("first usage %+v", u)
	}
	if u := s.Messages[3].Usage; u.InputTokens != 400 || u.CacheWriteTokens != 200 || u.ReasoningTokens != 30 {
		t.Errorf("second usage %+v", u)
	}
	o := importertest.Session(t, res, "ses_zc2")
	if o.Model != "glm-4.5-air" || importertest.Texts(o, loom.RoleAssistant)[0] != "GLM-4.5-Air." {
		t.Errorf("other session %q %q", o.Model, importertest.Texts(o, loom.RoleAssistant))
	}
}

// The rule for bad input, row by row (the property test of
// importer/agents finds no JSON file in a database): a message's or
// part's data damaged is one problem line, every other message kept in
// its place.
func TestOneDamagedRowIsOneLine(t *testing.T) {
	before := importertest.ReadFile(t, Format{}, filepath.Join("testdata", dbName))
	ids := func(res *importer.Result) []string {
		var out []string
		for _, s := range res.Sessions {
			for _, m := range s.Messages {
				out = append(out, s.SourceID+"/"+m.ID)
			}
		}
		return out
	}
	want := ids(before)
	for _, table := range []string{"message", "part"} {
		for _, way := range []string{"garbage", "cut", "not UTF-8"} {
			for rowid := 1; rowid <= 12; rowid++ {
				dir := importertest.CopyDir(t, "testdata")
				path := filepath.Join(dir, dbName)
				db := importertest.SQLiteWriter(t, path)
				var id, data string
				if err := db.QueryRow(`SELECT id, data FROM `+table+` WHERE rowid = ?`, rowid).Scan(&id, &data); err != nil {
					db.Close()
					continue
				}
				bad := map[string]string{"garbage": "\x00\x01garbage", "cut": data[:len(data)/2], "not UTF-8": strings.Replace(data, `"role": "`, `"role": "`+"\xff\xfe", 1)}[way]
				if way == "not UTF-8" && table == "part" {
					bad = strings.Replace(data, `": "`, `": "`+"\xff\xfe", 1)
				}
				importertest.Exec(t, db, `UPDATE `+table+` SET data = ? WHERE rowid = ?`, bad, rowid)
				db.Close()
				after := importertest.ReadFile(t, Format{}, path)
				what := fmt.Sprintf("%s %s made %s", table, id, way)
				if len(after.Problems) != len(before.Problems)+1 {
					t.Errorf("%s: problems %v", what, after.Problems)
				}
				var kept []string
				got := ids(after)
				for _, m := range want {
					if slices.Contains(got, m) {
						kept = append(kept, m)
					} else if !strings.HasSuffix(m, "/"+id) && table == "message" || table == "part" && way != "not UTF-8" && !strings.HasSuffix(m, "/msg_"+id[4:]) {
						t.Errorf("%s: message %s lost", what, m)
					}
				}
				var order []string
				for _, m := range got {
					if slices.Contains(want, m) {
						order = append(order, m)
					}
				}
				if !slices.Equal(order, kept) {
					t.Errorf("%s: messages %v, want %v", what, order, kept)
				}
			}
		}
	}
}

func TestImportAndCount(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, "testdata", 2, 6)
	importertest.RefusesOtherDB(t, Format{}, dbName)
	n, err := Format{}.CountSessions(t.Context(), importertest.OneBundle(t, Format{}, filepath.Join("testdata", dbName)))
	if n != 2 || err != nil {
		t.Errorf("counted %d, %v", n, err)
	}
}

// Its places: ~/.zcode/cli/db and ~/.zcode/cli; $LOOM_ZCODE_DIR
// replaces them.
func TestRoots(t *testing.T) {
	if roots := (Format{}).Roots(nil, "/home/u"); len(roots) != 2 || roots[0] != "/home/u/.zcode/cli/db" || roots[1] != "/home/u/.zcode/cli" {
		t.Errorf("roots %v", roots)
	}
	if got := (Format{}).Roots(importertest.Getenv("LOOM_ZCODE_DIR", "/x/z"), "/home/u"); len(got) != 1 || got[0] != "/x/z" {
		t.Errorf("with $LOOM_ZCODE_DIR: %v", got)
	}
}
