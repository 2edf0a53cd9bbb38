package opencode

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// realDB is a database opencode 1.18.33 wrote, run offline against a
// fake OpenAI-compatible model (a custom provider priced at a dollar a
// million tokens in and two out): a prompt with reasoning and a turn
// more with `run --continue`, a file read, and a task delegated to the
// general sub-agent. (opencode quotes a prompt given as arguments to
// `run`, as in the first two sessions; the last one's came on stdin.)
const realDB = "testdata/real-1.18.33.db"

// TestReadReal: what opencode itself wrote reads with every prompt,
// reply, reasoning block and tool call, the sub-agent linked to the
// session that ran it, and the usage and cost opencode recorded, output
// counted with its reasoning.
func TestReadReal(t *testing.T) {
	a := readRoot(t, realDB)
	if len(a.problems) != 0 || len(a.skipped) != 0 {
		t.Errorf("problems %v, skipped %v", a.problems, a.skipped)
	}
	equal(t, "sessions", importertest.SourceIDs(a.sessions), []string{"ses_dee9c12e1ffefP7ZPH46qGM3L0", "ses_dee9b107effejw69JuIMldppzc",
		"ses_dee973d01ffehwXRnXBoiPYurF", "ses_dee96b80cffebKjj7P9VAwCobd"})

	plain := a.session(t, "ses_dee9c12e1ffefP7ZPH46qGM3L0")
	equal(t, "plain title", plain.Title, "A fake title")
	equal(t, "plain prompts", texts(plain, loom.RoleUser), []string{`"Say hello in one line."`, `"One more on the greeting?"`})
	equal(t, "plain replies", texts(plain, loom.RoleAssistant), []string{"Hello there.", "Continued and answering."})
	equal(t, "plain reasoning", plain.Messages[1].Parts[1], loom.Part{ID: plain.Messages[1].Parts[1].ID, Type: loom.PartReasoning, Text: "A greeting."})
	// The fake sent 1000 tokens in (200 of them cached) and 15 out (5 of
	// them reasoning); opencode recorded 800, 200, 10 and 5.
	u := plain.Messages[1].Usage
	equal(t, "plain usage", loom.Usage{InputTokens: u.InputTokens, CacheReadTokens: u.CacheReadTokens, OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens, APICalls: u.APICalls},
		loom.Usage{InputTokens: 800, CacheReadTokens: 200, OutputTokens: 15, ReasoningTokens: 5, APICalls: 1})
	if c := u.CostUSD; c < 0.00083*0.999 || c > 0.00083*1.001 {
		t.Errorf("plain cost %g, want 0.00083", c)
	}

	read := a.session(t, "ses_dee9b107effejw69JuIMldppzc")
	equal(t, "read tools", tools(read), []string{"read:completed"})
	for _, p := range read.Messages[1].Parts {
		if p.Type == loom.PartTool && !strings.Contains(string(p.Output), "beta") {
			t.Errorf("the read's output %s", p.Output)
		}
	}

	parent, child := a.session(t, "ses_dee973d01ffehwXRnXBoiPYurF"), a.session(t, "ses_dee96b80cffebKjj7P9VAwCobd")
	equal(t, "child kind", child.Kind, loom.KindSubagent)
	equal(t, "child parent", child.ParentSourceID, parent.SourceID)
	equal(t, "child prompt", texts(child, loom.RoleUser), []string{"Sub task: say sub hello"})
	equal(t, "parent tools", tools(parent), []string{"task:completed"})
	var agent loom.Part
	for _, p := range parent.Messages[1].Parts {
		if p.Type == loom.PartAgent {
			agent = p
		}
	}
	if agent.Name != "general" || !strings.HasSuffix(agent.SessionID, child.SourceID) {
		t.Errorf("the agent part %+v does not name the general sub-agent's session %s", agent, child.SourceID)
	}
}

// TestReadKilo: Kilo's database, of opencode's schema, is read as
// opencode's under Kilo's name, from kilo.db in Kilo's data directory.
func TestReadKilo(t *testing.T) {
	equal(t, "roots", Kilo.Roots(func(string) string { return "" }, "/home/u"), []string{filepath.FromSlash("/home/u/.local/share/kilo")})
	dir := t.TempDir()
	data := importertest.ReadBytes(t, realDB)
	importertest.WriteFile(t, filepath.Join(dir, kiloApp.db), data, 0o644)
	bs, err := Kilo.Bundles(t.Context(), dir)
	if err != nil || len(bs) != 1 {
		t.Fatalf("bundles %v, %v", bs, err)
	}
	res, err := Kilo.Read(t.Context(), bs[0])
	if err != nil || len(res.Sessions) != 4 {
		t.Fatalf("read: %v, %d sessions", err, len(res.Sessions))
	}
	if bs, _ := (Format{}).Bundles(t.Context(), dir); len(bs) != 0 {
		t.Errorf("opencode's format finds %v in Kilo's directory", bs)
	}
}

// texts is the text of each of s's messages of role.
func texts(s *importer.Session, role string) []string {
	var out []string
	for _, m := range s.Messages {
		if m.Role == role {
			out = append(out, m.Text())
		}
	}
	return out
}
