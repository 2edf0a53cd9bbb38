package command_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
)

// With [secrets] redact_on_write, the store a command opens is still
// the engine's, with all it provides: an import counts calls and locks
// its source files (so a hook and a watcher on one file are serialised),
// loom embed and loom serve find vectors, loom serve and loom sync find
// the sync records, tokens and the edit index. And what a command writes
// is redacted there.
func TestRedactOnWriteKeepsTheStoresCapabilities(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	clitest.WriteConfig(t, fx, "[secrets]\nredact_on_write = true\n")
	ios, _, _, _ := term.Test()
	env := fx.Env()
	inv := command.NewInvocation(&command.Factory{
		IO:          ios,
		Env:         func(k string) string { return env[k] },
		Getwd:       func() (string, error) { return fx.Project, nil },
		OpenStore:   clitest.OpenFor,
		OpenReplica: clitest.OpenReplicaFor,
	})
	t.Cleanup(func() { inv.Close() })
	ctx := context.Background()
	st, err := inv.CreateStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The engine's own store, opened without the setting: every
	// optional capability it has, the store of the setting has too. On
	// SQLite that is all of them. The required ones (counted calls,
	// source locks, one-transaction imports, sync records, the edit
	// index and its version, project moves, originals) every store has
	// by its type, loom.Engine.
	url, err := inv.DBURL()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := clitest.OpenFor(ctx, url, cli.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	caps := map[string]func(loom.Engine) bool{
		"vectors (Vectors)":             func(e loom.Engine) bool { return e.Optional().Vectors != nil },
		"tokens (Tokens)":               func(e loom.Engine) bool { return e.Optional().Tokens != nil },
		"shares (Shares)":               func(e loom.Engine) bool { return e.Optional().Shares != nil },
		"activity (Activity)":           func(e loom.Engine) bool { return e.Optional().Activity != nil },
		"the index size (IndexSize)":    func(e loom.Engine) bool { return e.Optional().IndexSize != nil },
		"the recorded roots (Roots)":    func(e loom.Engine) bool { return e.Optional().Roots != nil },
		"index merging (IndexMerger)":   func(e loom.Engine) bool { return e.Optional().IndexMerger != nil },
		"scrubbing (Scrubber)":          func(e loom.Engine) bool { return e.Optional().Scrubber != nil },
		"the scrub mark (ScrubMarker)":  func(e loom.Engine) bool { return e.Optional().ScrubMarker != nil },
		"the local sync log (LocalLog)": func(e loom.Engine) bool { return e.Optional().LocalLog != nil },
	}
	for name, has := range caps {
		switch {
		case has(raw) && !has(st):
			t.Errorf("with redact_on_write the store has no %s", name)
		case !has(raw) && !clitest.OnPostgres():
			t.Errorf("the SQLite engine's store has no %s", name)
		}
	}

	sec := secretstest.New(73).Secret("github-token")
	s := &loom.Session{UserID: "local", Key: "cli:deploy"}
	m := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "push with " + sec.Text}}}
	if err := st.Append(ctx, s, m); err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("messages %v, %v", msgs, err)
	}
	if text := msgs[0].Text(); strings.Contains(text, sec.Value) || !strings.Contains(text, loom.RedactedPrefix) {
		t.Errorf("with redact_on_write the store keeps %q", text)
	}

	// loom sync runs on the replica the wiring opens beside the store:
	// with the setting too, SQLite's store has one.
	if _, rep, err := inv.CreateReplica(ctx); err != nil {
		t.Fatal(err)
	} else if rep == nil && !clitest.OnPostgres() {
		t.Errorf("with redact_on_write the SQLite engine's store has no sync replica")
	}
}

// A line a command prints of what it wrote (loom session import
// --watch's title of a new session) is what the store holds: redacted
// with [secrets] redact_on_write, as written without it.
func TestRedactOnWriteRedactsPrintedText(t *testing.T) {
	t.Parallel()
	sec := secretstest.New(74).Secret("github-token")
	title := "deploy with " + sec.Value + " please"
	for _, on := range []bool{true, false} {
		fx := clitest.NewEmptyFixture(t)
		clitest.WriteConfig(t, fx, fmt.Sprintf("[secrets]\nredact_on_write = %v\n", on))
		ios, _, _, _ := term.Test()
		env := fx.Env()
		delete(env, "LOOM_REDACT_ON_WRITE")
		inv := command.NewInvocation(&command.Factory{
			IO:        ios,
			Env:       func(k string) string { return env[k] },
			Getwd:     func() (string, error) { return fx.Project, nil },
			OpenStore: clitest.OpenFor,
		})
		got := inv.RedactOnWrite(title)
		if on && (strings.Contains(got, sec.Value[len(sec.Value)-8:]) || !strings.Contains(got, secrets.MarkerPrefix)) {
			t.Errorf("redact_on_write on: printed %q", got)
		}
		if !on && got != title {
			t.Errorf("redact_on_write off: printed %q, want %q", got, title)
		}
		inv.Close()
	}
}
