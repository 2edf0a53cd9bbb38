package secrets_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/agents"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/synclog"
)

// With redact_on_write, a real Claude Code session holding a GitHub
// token, an AWS key id and a database password in its prompt, a command
// and the command's output is imported: no byte of any of them is left
// in the store file, its WAL, the kept original (expanded) or the
// records sync sends, and the original, its file gone, reimports to the
// redacted session.
func TestRedactOnWriteKeepsNoSecretAnywhere(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	g := secretstest.New(84)
	planted := []secretstest.Secret{g.Secret("github-token"), g.Secret("aws-access-key"), g.Secret("url-credentials")}
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agent-sessions", "claude-code", "spotter", "short.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	data := string(src)
	for old, add := range map[string]string{
		// the prompt, the command and its output
		`"content":"mix phx.server doesnt seem to start"`: `"content":"mix phx.server doesnt seem to start; ` + quoted(planted[0].Text+"\n"+planted[1].Text+"\n"+planted[2].Text) + `"`,
		`"command":"mix phx.server 2>&1 | head -80"`:      `"command":"` + quoted(planted[2].Text+" GITHUB_TOKEN="+planted[0].Value+" mix phx.server 2>&1 | head -80") + `"`,
	} {
		if !strings.Contains(data, old) {
			t.Fatalf("the sample session no longer holds %s", old)
		}
		data = strings.Replace(data, old, add, 1)
	}
	data += `{"parentUuid":"7d48cbd2-6615-4dd8-87f6-38f12b8167d6","isSidechain":false,"userType":"external","cwd":"/home/marco/projects/spotter","sessionId":"55604662-cf2a-4331-851a-ec234028f8ca","version":"2.1.38","gitBranch":"master","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_0116Hyi5v8ut7Ffb7d8qV1Sc","type":"tool_result","content":"` +
		quoted("$ env | grep -i token\nGITHUB_TOKEN="+planted[0].Value+"\n"+planted[1].Text+"\n") + `","is_error":false}]},"uuid":"9d48cbd2-6615-4dd8-87f6-38f12b8167d6","timestamp":"2026-02-10T21:13:56.846Z"}` + "\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "55604662-cf2a-4331-851a-ec234028f8ca.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	withAgents := func(args ...string) string {
		t.Helper()
		r := fx.RunWith(t, clitest.RunOpts{Env: map[string]string{"LOOM_REDACT_ON_WRITE": "true"},
			Before: func(f *cli.Factory) { f.Formats = agents.Formats() }}, args...)
		if r.Code != 0 {
			t.Fatalf("loom %s: exit %d: %s", strings.Join(args, " "), r.Code, r.Stderr)
		}
		return r.Stdout
	}
	// Sync is set up, so that the store keeps the log sync sends (an
	// engine that keeps none, PostgreSQL's, sends nothing).
	ctx := context.Background()
	eng, replica, err := clitest.OpenReplicaFor(ctx, fx.DB)
	if err != nil {
		t.Fatal(err)
	}
	syncs := replica != nil
	if syncs {
		if _, err := replica.EnableSync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eng.Close()
	withAgents("session", "import", "--from", "claude-code", path)

	leaks := func(where string, b []byte) {
		t.Helper()
		for _, s := range planted {
			if n := bytes.Count(b, []byte(s.Value)); n > 0 {
				t.Errorf("%s holds the %s %d times", where, s.Kind, n)
			}
		}
	}
	st := fx.OpenStore(t)
	kept := keptOriginal(t, st, path)
	if len(kept) == 0 {
		t.Fatal("nothing of the file is kept")
	}
	leaks("the kept original", kept)
	if !bytes.Contains(kept, []byte("[REDACTED:github-token]")) {
		t.Errorf("the kept original holds no marker:\n%s", kept)
	}
	// What sync sends is the store's log, record by record.
	var sent, originals int
	if log := st.Optional().LocalLog; syncs && log != nil {
		if _, err := log.RedactLog(ctx, func(payloads [][]byte) ([][]byte, error) {
			return nil, sentRecord(payloads, leaks, &sent, &originals)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if syncs && (sent == 0 || originals == 0) {
		t.Errorf("the log holds %d records, %d of a kept original: the test sees nothing sync sends", sent, originals)
	}
	st.Close()
	if !clitest.OnPostgres() {
		for _, f := range []string{fx.DB, fx.DB + "-wal"} {
			if b, err := os.ReadFile(f); err == nil {
				leaks(filepath.Base(f), b)
			}
		}
	}

	// The redacted original reads back as the redacted session.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	withAgents("session", "reimport", "--from", "claude-code")
	shown := fx.MustRun(t, "session", "show", "claude-code:55604662-cf2a-4331-851a-ec234028f8ca", "--full-history")
	leaks("the reimported session", []byte(shown))
	if !strings.Contains(shown, "[REDACTED:github-token]") {
		t.Errorf("after reimport the session shows:\n%s", shown)
	}
}

// sentRecord reads one record of the log as sync sends it (the
// fragments of one put together), and has leaks look at it and, for a
// kept original, at its chunk expanded.
func sentRecord(payloads [][]byte, leaks func(string, []byte), sent, originals *int) error {
	whole := payloads[0]
	if len(payloads) > 1 {
		whole = nil
		for _, b := range payloads {
			p, err := synclog.Decode(b)
			if err != nil {
				return err
			}
			whole = append(whole, p.(*synclog.Fragment).Data...)
		}
	}
	p, err := synclog.Decode(whole)
	if err != nil {
		return err
	}
	*sent++
	b, _ := json.Marshal(p)
	leaks("a "+p.Type().String()+" record", b)
	if o, ok := p.(*synclog.OriginalKept); ok {
		*originals++
		b, err := importer.DecompressOriginal(o.Data)
		if err != nil {
			return err
		}
		leaks("an original_kept record's chunk", b)
	}
	return nil
}
