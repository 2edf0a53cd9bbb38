package doctor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/agentfiles"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// TestDoctorCountsSessionsNotFiles: doctor counts a Gemini CLI
// project's sessions, not its files (an empty chat the agent started,
// a sub-agent's file beside its session are none), and says one day
// as such, not "1 days".
func TestDoctorCountsSessionsNotFiles(t *testing.T) {
	t.Parallel()
	sample, err := os.ReadFile(filepath.Join(clitest.Samples, "gemini", "vibecodingtracker-gemini.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	clitest.WriteSettings(t, filepath.Join(home, ".gemini", "settings.json"), `{"general": {"sessionRetention": {"maxAge": "1d"}}}`)
	chats := filepath.Join(home, ".gemini", "tmp", "0123abcd", "chats")
	for i, age := range []float64{2, 3, 5, 30, 40} {
		if _, err := agentfiles.Gemini(chats, sample, "s"+string(rune('a'+i)), time.Now().Add(-time.Duration(age)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for name, data := range map[string]string{
		// A chat as Gemini CLI starts it: its metadata, no message yet.
		"session-2026-11-27T10-00-feedbeef.jsonl": `{"sessionId":"feedbeef-0000","projectHash":"0123abcd","startTime":"` + now + `","lastUpdated":"` + now + `","kind":"main"}` + "\n",
		// A sub-agent's chat, with a message.
		"session-2026-11-27T10-01-5ab5ab5a.jsonl": `{"sessionId":"5ab5ab5a-0000","projectHash":"0123abcd","startTime":"` + now + `","lastUpdated":"` + now + `","kind":"subagent"}` + "\n" +
			`{"id":"m1","timestamp":"` + now + `","type":"user","content":[{"text":"look"}]}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(chats, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fx := clitest.NewEmptyFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Env: map[string]string{"HOME": home}, Before: func(f *cli.Factory) {
		clitest.AllFormats(f)
		f.Now = time.Now
	}}, "doctor")
	if r.Code != 0 {
		t.Fatalf("doctor: exit %d: %s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "keeps a session 1 day after") || strings.Contains(r.Stdout, "1 days") || !strings.Contains(r.Stdout, "  5 sessions; ") {
		t.Fatalf("doctor says:\n%s", r.Stdout)
	}
}
