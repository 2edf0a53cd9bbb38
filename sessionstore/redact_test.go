package sessionstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/memstore"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/sessionstore"
)

// A store set to redact (config.toml's [secrets] redact_on_write)
// replaces secrets by markers in every text a write brings in: appended
// messages, updated parts, imported sessions and the changes of an
// import; the writer of an append goes on with what was stored. It is the
// store's own rule, so the store is still the engine's, with all it
// provides
// (a CallCounter, a SourceLocker, …: package cli/command's tests).
func TestRedactingStore(t *testing.T) {
	ctx := context.Background()
	g := secretstest.New(73)
	var values []string
	secret := func() string {
		sec := g.Secret("github-token")
		values = append(values, sec.Value)
		return sec.Text
	}
	st := memstore.New(sessionstore.Redacting(secrets.Default()))
	said := func(text string) loom.Part {
		return loom.Part{Type: loom.PartText, Text: "deploy with " + text}
	}
	s := &loom.Session{UserID: "local", Key: "cli:deploy"}
	m := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{said(secret())}}
	if err := st.Append(ctx, s, m); err != nil {
		t.Fatal(err)
	}
	if held := m.Parts[0].Text; strings.Contains(held, values[0]) || !strings.Contains(held, secrets.MarkerPrefix) {
		t.Errorf("the appender goes on with %q, not what was stored", held)
	}
	update := said(secret())
	update.ID = m.Parts[0].ID
	if err := st.UpdatePart(ctx, s.ID, m.Seq, update); err != nil {
		t.Fatal(err)
	}
	imported := &loom.Session{ID: "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c0d", UserID: "local", Key: "cli:import", CreatedAt: loom.Now(), UpdatedAt: loom.Now()}
	if err := st.Import(ctx, []*loom.SessionData{{Session: imported, Messages: []*loom.Message{
		{ID: loom.NewID(), SessionID: imported.ID, Role: loom.RoleUser, Seq: 1, Parts: []loom.Part{withID(said(secret()), "part-1")}, CreatedAt: loom.Now()},
	}}}); err != nil {
		t.Fatal(err)
	}
	part := said(secret())
	part.ID = "part-1"
	if err := st.ApplyImport(ctx, &loom.ImportWrite{Changes: []loom.ImportChange{
		{Session: s, Messages: []*loom.Message{{Role: loom.RoleUser, Parts: []loom.Part{said(secret())}}}},
		{SessionID: imported.ID, Seq: 1, Part: &part},
	}}); err != nil {
		t.Fatal(err)
	}

	var stored []string
	for _, id := range []string{s.ID, imported.ID} {
		msgs, err := st.Messages(ctx, id, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(msgs)
		stored = append(stored, string(b))
	}
	all := strings.Join(stored, "\n")
	for i, v := range values {
		if strings.Contains(all, v) {
			t.Errorf("secret %d of %d is stored as written", i+1, len(values))
		}
	}
	if n := strings.Count(all, secrets.MarkerPrefix); n < 3 {
		t.Errorf("%d markers stored, want one for each text that holds a secret now (3):\n%s", n, all)
	}
}

func withID(p loom.Part, id string) loom.Part {
	p.ID = id
	return p
}
