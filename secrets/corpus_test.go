package secrets_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/agents"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
)

// cleanSessions reads the real agent sessions of testdata/agent-sessions
// (Claude Code, Codex CLI, Gemini CLI) through loom's own importers:
// real prompts, replies and tool output, with no secret in them.
func cleanSessions(t *testing.T) []*loom.Message {
	var out []*loom.Message
	root := filepath.Join("..", "testdata", "agent-sessions")
	dirs := map[string]string{"claude-code": "claude-code", "codex": "codex", "gemini": "gemini"}
	for _, f := range agents.Formats() {
		dir, ok := dirs[f.Tool()]
		if !ok {
			continue
		}
		bundles, err := f.Bundles(context.Background(), filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bundles {
			res, err := f.Read(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range res.Sessions {
				out = append(out, s.Messages...)
			}
		}
	}
	if len(out) < 300 {
		t.Fatalf("only %d messages in the real sessions", len(out))
	}
	return out
}

// cleanCode is this repository's own code and docs, cut in chunks of
// about 1.5 KB as tool output: real code full of words like token, key,
// secret and password that must not be flagged.
func cleanCode(t *testing.T) []string {
	var files []string
	for _, g := range []string{"../*.go", "../sqlite/*.go", "../synclog/*.go", "../cli/command/*.go", "../mcp/*.go", "../config/*.go", "../docs/*.md"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	var chunks []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			// Tests hold fake secrets of their own on purpose.
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for s := string(b); len(s) > 0; {
			n := min(1500, len(s))
			chunks = append(chunks, s[:n])
			s = s[n:]
		}
	}
	return chunks
}

// seeded is one fake secret written into a message, with the strings
// that must be gone from the message once it is redacted.
type seeded struct {
	kind, how string
	msg       *loom.Message
	needles   []string
}

func toolPart(output any, input string) loom.Part {
	out, _ := json.Marshal(output)
	in, _ := json.Marshal(map[string]string{"command": input})
	return loom.Part{ID: loom.NewID(), Type: loom.PartTool, CallID: "call_1", Name: "bash", Status: loom.ToolCompleted, Input: in, Output: out}
}

// seed writes secret s into a message the way how says, next to clean
// code.
func seed(s secretstest.Secret, how, code string) seeded {
	m := &loom.Message{ID: loom.NewID(), Role: loom.RoleAssistant}
	needles := strings.Split(s.Value, "\n")
	switch how {
	case "prompt":
		m.Role = loom.RoleUser
		m.Parts = []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "This fails with the config below, why?\n\n" + s.Text + "\n\nThe handler is:\n" + code}}
	case "tool-output":
		m.Parts = []loom.Part{toolPart(code+"\n"+s.Text+"\n", "cat config/settings.txt")}
	case "tool-input":
		m.Parts = []loom.Part{toolPart("ok", s.Text)}
	case "file":
		m.Role = loom.RoleUser
		m.Parts = []loom.Part{{ID: loom.NewID(), Type: loom.PartFile, Filename: "notes.txt", Mime: "text/plain",
			Source: &loom.FileSource{Type: "file", Path: "notes.txt", Text: code + "\n" + s.Text}}}
	case "json":
		m.Parts = []loom.Part{toolPart(map[string]any{"status": 200, "config": map[string]string{"note": s.Text}, "source": code[:min(200, len(code))]}, "curl -s localhost:8080/debug/config")}
	case "diff":
		var d strings.Builder
		d.WriteString("diff --git a/deploy/env b/deploy/env\n--- a/deploy/env\n+++ b/deploy/env\n@@ -1,3 +1,4 @@\n")
		for _, l := range strings.Split(s.Text, "\n") {
			d.WriteString("+" + l + "\n")
		}
		m.Parts = []loom.Part{toolPart(d.String(), "git diff")}
	case "base64":
		blob := base64.StdEncoding.EncodeToString([]byte(s.Text))
		m.Parts = []loom.Part{toolPart(code+"\nkubectl get secret app -o yaml\ndata:\n  config: "+blob+"\n", "kubectl get secret app -o yaml")}
		needles = []string{blob}
	}
	var keep []string
	for _, n := range needles {
		if len(strings.TrimSpace(n)) >= 8 {
			keep = append(keep, strings.TrimSpace(n))
		}
	}
	return seeded{kind: s.Kind, how: how, msg: m, needles: keep}
}

// messageText is everything of m a reader could see, as stored.
func messageText(m *loom.Message) string {
	b, _ := json.Marshal(m)
	var s strings.Builder
	s.Write(b)
	for _, p := range m.Parts {
		s.WriteString("\n" + p.Text + "\n" + loom.JSONText(p.Output) + "\n" + loom.JSONText(p.Input))
		if p.Source != nil {
			s.WriteString("\n" + p.Source.Text)
		}
	}
	return s.String()
}

// The seeded corpus: 31 kinds of fake secrets, 8 of each, written into
// prompts, tool output and input, file parts, JSON, diffs and base64
// blobs beside real code, and the real sessions and code with none. The
// detector must redact at least 95% of the secrets and flag at most 1%
// of the clean messages (docs/reliability.md keeps the figures).
func TestSeededCorpus(t *testing.T) {
	d := secrets.Default()
	code := cleanCode(t)
	g := secretstest.New(48)
	ways := []string{"prompt", "tool-output", "tool-input", "file", "json", "diff", "base64"}
	var corpus []seeded
	for i := range 8 {
		for k, kind := range secretstest.Kinds {
			how := ways[(i+k)%len(ways)]
			corpus = append(corpus, seed(g.Secret(kind), how, code[(i*len(secretstest.Kinds)+k)%len(code)]))
		}
	}
	missed := map[string]int{}
	caught := 0
	for _, s := range corpus {
		red, _ := d.RedactMessage(s.msg)
		text := messageText(red)
		ok := true
		for _, n := range s.needles {
			if strings.Contains(text, n) {
				ok = false
			}
		}
		if ok {
			caught++
		} else {
			missed[s.kind+" in "+s.how]++
		}
	}
	recall := float64(caught) / float64(len(corpus))

	var clean []*loom.Message
	clean = append(clean, cleanSessions(t)...)
	for _, c := range code {
		clean = append(clean, &loom.Message{ID: loom.NewID(), Role: loom.RoleTool, Parts: []loom.Part{toolPart(c, "cat file")}})
	}
	flagged := map[string]int{}
	nflagged := 0
	for _, m := range clean {
		places := d.ScanMessage(m)
		if len(places) > 0 {
			nflagged++
			for _, p := range places {
				flagged[p.RuleID]++
			}
		}
	}
	fp := float64(nflagged) / float64(len(clean))
	t.Logf("seeded: %d secrets of %d kinds in %d ways; recall %.1f%% (%d missed: %v)",
		len(corpus), len(secretstest.Kinds), len(ways), 100*recall, len(corpus)-caught, sortedCounts(missed))
	t.Logf("clean: %d messages (real sessions and this repository's code); %d flagged = %.2f%% (%v)",
		len(clean), nflagged, 100*fp, sortedCounts(flagged))
	values, echoed := echoSpread(d, clean)
	t.Logf("clean: the echoes of the %d values kept from what is flagged change %d more messages", values, echoed)
	if echoed > nflagged {
		t.Errorf("the echoes of what is flagged change %d more clean messages, more than the %d flagged", echoed, nflagged)
	}
	if len(corpus) < 200 {
		t.Fatalf("corpus holds %d secrets, want 200 or more", len(corpus))
	}
	if recall < 0.95 {
		t.Errorf("recall %.1f%%, want 95%% or more", 100*recall)
	}
	if fp > 0.01 {
		t.Errorf("false positives on %.2f%% of clean messages, want 1%% at most", 100*fp)
	}
}

func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d; ", k, m[k])
	}
	return b.String()
}

// echoSpread reads clean messages as one read (the worst case: a read
// holding all of them), keeps the values the detector finds in them
// (secrets.Echoes), and returns how many it kept and how many messages
// the detector does not flag their repeats would change: how far what
// is found by mistake spreads.
func echoSpread(d *secrets.Detector, clean []*loom.Message) (values, echoed int) {
	echoes := d.Echoes(0)
	var rest []*loom.Message
	for _, m := range clean {
		if len(d.ScanMessage(m)) == 0 {
			rest = append(rest, m)
			continue
		}
		for _, p := range m.Parts {
			echoes.RedactPart(p)
		}
	}
	for _, m := range rest {
		if len(echoes.ScanMessage(m)) > 0 {
			echoed++
		}
	}
	return len(echoes.Values()), echoed
}
