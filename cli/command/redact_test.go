package command_test

import (
	"context"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/clitest"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/syncrun"
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
		IO:        ios,
		Env:       func(k string) string { return env[k] },
		Getwd:     func() (string, error) { return fx.Project, nil },
		OpenStore: clitest.OpenFor,
	})
	t.Cleanup(func() { inv.Close() })
	ctx := context.Background()
	st, err := inv.CreateStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, ok := range map[string]bool{
		"counted calls (loom.CallCounter)":  is[loom.CallCounter](st),
		"source locks (loom.SourceLocker)":  is[loom.SourceLocker](st),
		"one-transaction imports":           is[loom.ImportApplier](st),
		"vectors (loom.VectorStore)":        is[loom.VectorStore](st),
		"sync records (loom.SyncStore)":     is[loom.SyncStore](st),
		"sync (syncrun.Store)":              is[syncrun.Store](st),
		"tokens (loom.TokenStore)":          is[loom.TokenStore](st),
		"the edit index (loom.EditStore)":   is[loom.EditStore](st),
		"shares (loom.ShareStore)":          is[loom.ShareStore](st),
		"project moves (loom.ProjectMover)": is[loom.ProjectMover](st),
	} {
		if !ok {
			t.Errorf("with redact_on_write the store has no %s", name)
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
}

func is[T any](st loom.Store) bool {
	_, ok := st.(T)
	return ok
}
