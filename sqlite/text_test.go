package sqlite_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// A message's text is stored once: a message that is one text or
// reasoning part keeps its text only in the body's search text, whose
// index follows it, and reads back whole; other messages keep their
// parts whole. A text changed by hand with sqlite3 reads and searches
// as changed.
func TestTextStoredOnce(t *testing.T) {
	ctx := context.Background()
	st := tempStore(t)
	msgs := []*loom.Message{
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "plain lighthouse words\nover two lines"}}},
		{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartReasoning, Text: "pondering quietly"}}},
		{Role: loom.RoleAssistant, Parts: []loom.Part{
			{Type: loom.PartText, Text: "reading the harbor"},
			{Type: loom.PartTool, CallID: "c1", Name: "read_file", Status: loom.ToolCompleted,
				Input: json.RawMessage(`{"path":"harbor.go"}`), Output: json.RawMessage(`"the file says marmalade"`)},
		}},
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: ""}}},
		{Role: loom.RoleUser, Parts: []loom.Part{}},
	}
	s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:text"}
	if err := st.Append(ctx, s, msgs...); err != nil {
		t.Fatal(err)
	}
	body := func(seq int) (parts, content string) {
		t.Helper()
		if err := st.DB().QueryRow(`SELECT b.parts, b.content FROM messages m JOIN bodies b ON b.id = m.body_id
			WHERE m.session_id = ? AND m.seq = ?`, s.ID, seq).Scan(&parts, &content); err != nil {
			t.Fatal(err)
		}
		return parts, content
	}
	for i, m := range msgs {
		parts, content := body(i + 1)
		if content != m.SearchText() {
			t.Errorf("message %d: content %q, want %q", i+1, content, m.SearchText())
		}
		stored := 0
		for _, p := range m.Parts {
			if p.Text != "" && strings.Contains(parts, p.Text) {
				stored++
			}
		}
		// Only the message with a tool call keeps its text in its parts.
		if want := map[int]int{2: 1}[i]; stored != want {
			t.Errorf("message %d: %d texts in parts %s, want %d", i+1, stored, parts, want)
		}
	}
	got, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range got {
		a, _ := json.Marshal(m.Parts)
		b, _ := json.Marshal(msgs[i].Parts)
		if string(a) != string(b) {
			t.Errorf("message %d reads back as %s, want %s", i+1, a, b)
		}
	}
	for _, word := range []string{"lighthouse", "pondering", "harbor", "marmalade"} {
		if hits, err := st.Search(ctx, loom.SearchQuery{Text: word, UserID: "local"}); err != nil || len(hits) != 1 {
			t.Errorf("search %q = %+v, %v", word, hits, err)
		}
	}

	// docs/schema.md's recipe for the text parts of a session.
	rows, err := st.DB().Query(`SELECT m.seq, m.role, coalesce(json_extract(p.value, '$.text'), b.content)
		FROM session_messages m JOIN bodies b ON b.id = m.body_id, json_each(b.parts) p
		WHERE m.session_id = ? AND json_extract(p.value, '$.type') = 'text' ORDER BY m.seq`, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for rows.Next() {
		var seq int
		var role, text string
		if err := rows.Scan(&seq, &role, &text); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, text)
	}
	rows.Close()
	if want := []string{msgs[0].Parts[0].Text, "reading the harbor", ""}; strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("the recipe's texts = %q, want %q", texts, want)
	}

	// The sqlite3 shell, when it is installed, changes the text of the
	// first message.
	q := `UPDATE bodies SET content = replace(content, 'lighthouse', 'windmill')
		WHERE id = (SELECT body_id FROM messages WHERE session_id = '` + s.ID + `' AND seq = 1);`
	if sh, err := exec.LookPath("sqlite3"); err == nil {
		if out, err := exec.Command(sh, st.Path(), q).CombinedOutput(); err != nil {
			t.Fatalf("sqlite3: %s %v", out, err)
		}
	} else if _, err := st.DB().Exec(q); err != nil {
		t.Fatal(err)
	}
	got, err = st.Messages(ctx, s.ID, loom.MessageQuery{Limit: 5})
	if err != nil || got[0].Parts[0].Text != "plain windmill words\nover two lines" {
		t.Fatalf("after the edit, message 1 = %+v, %v", got[0].Parts, err)
	}
	for word, want := range map[string]int{"lighthouse": 0, "windmill": 1} {
		if hits, _ := st.Search(ctx, loom.SearchQuery{Text: word, UserID: "local", Exact: true}); len(hits) != want {
			t.Errorf("after the edit, search %q = %d hits, want %d", word, len(hits), want)
		}
	}
	checkIntegrity(t, st)
}
