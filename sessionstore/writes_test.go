package sessionstore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/keptbytes"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/sqlite"
)

// TestEveryWriteIsRedacted holds each write of sessionstore.Store to
// what redact_on_write decided for it: a write that takes in text (or
// bytes) is run here with secrets in all it takes, and none of them may
// reach the store's file, its WAL or its kept originals; a write that
// takes in no text of a session is exempt, with the reason. A write
// added to Store fails here until it is declared one or the other (as
// secrets.TestGateDecidesEveryService does for the ways out).
func TestEveryWriteIsRedacted(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	st, err := sqlite.Open(context.Background(), db, sessionstore.Redacting(secrets.Default()))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	leaks := writeEverySecret(t, st.Store, st)
	if b, err := os.ReadFile(db + "-wal"); err == nil {
		leaks("the WAL", b)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	leaks("the store's file", b)
}

// writeEverySecret runs each write of st with secrets in all it takes,
// checks the kept originals, and returns what reports a planted secret
// found in bytes read from the store's files.
func writeEverySecret(t *testing.T, st *sessionstore.Store, originals loom.OriginalsKeeper) (leaks func(where string, b []byte)) {
	ctx := context.Background()
	g := secretstest.New(84)
	var planted []string
	secret := func() string {
		s := g.Secret("github-token")
		planted = append(planted, s.Value)
		return s.Text
	}
	text := func() loom.Part { return loom.Part{Type: loom.PartText, Text: "deploy with " + secret()} }
	main := &loom.Session{UserID: "local", Key: "cli:deploy", Title: "deploy " + secret()}
	first := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{text()}}
	chunk := func(path string, off int64) loom.OriginalChunk {
		b := []byte(`{"type":"user","message":{"content":"` + secret() + `"}}` + "\n")
		data, err := keptbytes.Compress(b)
		if err != nil {
			t.Fatal(err)
		}
		return loom.OriginalChunk{UserID: "local", Tool: "claude-code", Path: path, Bundle: path, SessionID: main.ID,
			Offset: off, Size: int64(len(b)), Data: data, ModTime: loom.Now()}
	}
	imported := "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c0d"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// In the order they run: each builds on what the ones before wrote.
	redacted := []struct {
		name string
		run  func()
	}{
		{"Append", func() { must(st.Append(ctx, main, first)) }},
		{"UpdatePart", func() {
			p := text()
			p.ID = first.Parts[0].ID
			must(st.UpdatePart(ctx, main.ID, first.Seq, p))
		}},
		{"UpdateSession", func() {
			title, desc := "deploy "+secret(), "deploy "+secret()
			_, err := st.UpdateSession(ctx, main.ID, loom.SessionUpdate{Title: &title, Description: &desc})
			must(err)
		}},
		{"Fork", func() {
			_, err := st.Fork(ctx, main.ID, loom.ForkOptions{Title: "deploy " + secret()})
			must(err)
		}},
		{"Import", func() {
			at := loom.Now()
			s := &loom.Session{ID: imported, UserID: "local", Key: "cli:import", Title: "deploy " + secret(),
				Description: secret(), LastPrompt: secret(), CreatedAt: at, UpdatedAt: at}
			must(st.Import(ctx, []*loom.SessionData{{Session: s, Messages: []*loom.Message{
				{ID: loom.NewID(), SessionID: imported, Role: loom.RoleUser, Seq: 1, Parts: []loom.Part{withID(text(), "part-1")}, CreatedAt: at},
			}}}))
		}},
		{"ApplyImport", func() {
			p := text()
			p.ID = "part-1"
			title := "deploy " + secret()
			again := *main
			again.Title = "deploy " + secret()
			must(st.ApplyImport(ctx, &loom.ImportWrite{
				Changes: []loom.ImportChange{
					{Session: &again, Messages: []*loom.Message{{Role: loom.RoleUser, Parts: []loom.Part{text()}}}},
					{SessionID: imported, Seq: 1, Part: &p},
					{SessionID: imported, Title: &title},
				},
				Originals: []loom.OriginalChunk{chunk("/p/applied.jsonl", 0)},
			}))
		}},
		{"KeepOriginal", func() { must(st.KeepOriginal(ctx, chunk("/p/kept.jsonl", 0))) }},
	}
	exempt := map[string]string{
		"UpdateUsage":         "counts of tokens only",
		"RepairInterrupted":   "marks what the store holds as interrupted, in loom's own words",
		"Rewind":              "moves turns the store holds to a fork; takes in no text",
		"Delete":              "takes in no text",
		"Restore":             "takes in no text",
		"Prune":               "takes in no text",
		"RecordImportedFiles": "the paths, sizes and hashes of the files an import read",
		"MoveProject":         "a project's id, name and directory",
		"PutSyncRecords":      "a hub's put of records sealed by the machine that sent them: the hub holds no key to read them, and the sender's store redacted them as it wrote them",
		"Lock":                "a lock row",
		"LockSource":          "a lock row",
		"CreateToken":         "a token loom makes, kept hashed, with the name its user gives it",
		"CreateScopedToken":   "as CreateToken",
		"RevokeToken":         "takes in no text",
		"CreateShare":         "a hub's share: a session sealed by its sharer, redacted before it was sealed (docs/security.md)",
		"RevokeShare":         "takes in no text",
	}
	typ := reflect.TypeFor[*sessionstore.Store]()
	declared := map[string]bool{}
	for _, w := range redacted {
		declared[w.name] = true
		if _, ok := typ.MethodByName(w.name); !ok {
			t.Errorf("%s is declared redacted here, but Store has no such write", w.name)
		}
	}
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		if _, ok := exempt[name]; !ok && !declared[name] {
			t.Errorf("sessionstore.Store.%s is a new write: redact what it takes in (redact.go) and run it here with secrets, or say here why it takes in no text of a session", name)
		}
	}
	for _, w := range redacted {
		w.run()
	}

	leaks = func(where string, b []byte) {
		t.Helper()
		for i, v := range planted {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds secret %d of %d as written", where, i+1, len(planted))
			}
		}
	}
	for _, path := range []string{"/p/applied.jsonl", "/p/kept.jsonl"} {
		var kept bytes.Buffer
		must(originals.OriginalChunks(ctx, "local", path, func(c loom.OriginalChunk) error {
			b, err := keptbytes.Expand(c.Data)
			kept.Write(b)
			return err
		}))
		leaks("the kept original "+path, kept.Bytes())
		if !strings.Contains(kept.String(), secrets.MarkerPrefix) {
			t.Errorf("the kept original %s holds no marker: %q", path, kept.String())
		}
	}
	return leaks
}
