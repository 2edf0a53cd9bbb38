package clitest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets/secretstest"
)

// SeedSecrets appends to fx's store a session of three turns whose
// prompts and tool output carry fake secrets of several kinds, and
// returns it with the secrets.
func SeedSecrets(t *testing.T, fx *Fixture) (*loom.Session, []string) {
	t.Helper()
	ctx := context.Background()
	st := fx.OpenEngine(t)
	defer st.Close()
	g := secretstest.New(7)
	s := &loom.Session{UserID: "local", Key: "cli:deploy", Title: "deploy the api", Project: fx.Proj}
	var values []string
	for i, kind := range []string{"aws-access-key", "github-token", "url-credentials", "stripe-key", "private-key", "dotenv-secret"} {
		sec := g.Secret(kind)
		values = append(values, strings.Split(sec.Value, "\n")[1%len(strings.Split(sec.Value, "\n"))])
		var m *loom.Message
		if i%2 == 0 {
			m = &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "wombat deploy step " + sec.Text}}}
		} else {
			m = &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c" + kind, Name: "bash",
				Status: loom.ToolCompleted, Input: []byte(`{"command":"cat .env"}`), Output: []byte(jsonQuote(sec.Text + "\nwombat done"))}}}
		}
		if err := st.Append(ctx, s, m); err != nil {
			t.Fatal(err)
		}
	}
	return s, values
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteString(`\` + string(r))
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// WriteConfig writes fx's config.toml.
func WriteConfig(t *testing.T, fx *Fixture, text string) {
	t.Helper()
	dir := filepath.Join(fx.Home, "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
