package secrets_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/agents"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/secrets/secretstest"
)

// redact reaches the kept originals of an imported session: once it
// ran, no chunk of the file loom kept holds the secret, and a reimport
// from them, the file gone, brings no secret back.
func TestSecretsRedactReachesOriginals(t *testing.T) {
	t.Parallel()
	clitest.SkipWhenRedactingOnWrite(t, "the kept original holds the secret until loom secrets redact runs only where nothing redacts it on its way in (TestRedactOnWriteKeepsNoSecretAnywhere checks the other way)")
	fx := clitest.NewEmptyFixture(t)
	sec := secretstest.New(11).Secret("aws-access-key")
	dir := t.TempDir()
	path := filepath.Join(dir, "9a1c5f0e-2b7d-4c3e-8f6a-1d2e3f4a5b6c.jsonl")
	line := func(uuid, parent, typ, content string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"cwd":%q,"sessionId":"9a1c5f0e-2b7d-4c3e-8f6a-1d2e3f4a5b6c","version":"2.1.38","type":%q,"uuid":%q,"timestamp":"2026-02-10T21:12:0%dZ","message":{"role":%q,"content":%s}}`,
			p, fx.Project, typ, uuid, len(uuid)%10, typ, content)
	}
	data := line("11111111-1111-4111-8111-111111111111", "", "user", `"please run `+sec.Text+` for me"`) + "\n" +
		line("22222222-2222-4222-8222-222222222222", "11111111-1111-4111-8111-111111111111", "assistant", `[{"type":"text","text":"done"}]`) + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	// The commands that read agents' files, with every agent's reader.
	withAgents := func(args ...string) string {
		t.Helper()
		r := fx.RunWith(t, clitest.RunOpts{Before: func(f *cli.Factory) { f.Formats = agents.Formats() }}, args...)
		if r.Code != 0 {
			t.Fatalf("loom %s: exit %d: %s", strings.Join(args, " "), r.Code, r.Stderr)
		}
		return r.Stdout
	}
	withAgents("session", "import", "--from", "claude-code", path)
	kept := func() string {
		st := fx.OpenStore(t)
		defer st.Close()
		return string(keptOriginal(t, st, path))
	}
	if got := kept(); got != data {
		t.Fatalf("kept original:\n%q\nwant the file's bytes", got)
	}
	r := fx.Run(t, "secrets", "redact", "--yes")
	if r.Code != 0 {
		t.Fatalf("redact: exit %d: %s", r.Code, r.Stderr)
	}
	got := kept()
	if strings.Contains(got, sec.Value) || !strings.Contains(got, "[REDACTED:aws-access-key]") {
		t.Fatalf("after redact the kept original holds:\n%s", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	withAgents("session", "reimport", "--from", "claude-code")
	shown := fx.MustRun(t, "session", "show", "claude-code:9a1c5f0e-2b7d-4c3e-8f6a-1d2e3f4a5b6c", "--full-history")
	if strings.Contains(shown, sec.Value) || !strings.Contains(shown, "[REDACTED:aws-access-key]") {
		t.Errorf("after reimport the session shows:\n%s", shown)
	}
	// delete --purge takes the originals with the session.
	fx.MustRun(t, "session", "delete", "claude-code:9a1c5f0e-2b7d-4c3e-8f6a-1d2e3f4a5b6c", "--purge", "--yes")
	if got := kept(); got != "" {
		t.Errorf("after delete --purge the store keeps %q", got)
	}
}

// keptOriginal is what st keeps of the file at path, its chunks
// decompressed and joined.
func keptOriginal(t *testing.T, st loom.Engine, path string) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := st.OriginalChunks(context.Background(), "local", path, func(c loom.OriginalChunk) error {
		b, err := importer.DecompressOriginal(c.Data)
		out.Write(b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
