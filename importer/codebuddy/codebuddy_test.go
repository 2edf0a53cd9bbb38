package codebuddy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	projects = filepath.Join("testdata", "projects")
	file     = filepath.Join(projects, "home-u-web", "cb-1.jsonl")
)

// A CodeBuddy transcript: reasoning and a call join one reply, the
// call completed by its result with the usage of its model call; the
// sub-agent's transcript is a sub-agent of the session.
func TestRead(t *testing.T) {
	res, s := importertest.ReadValidFor(t, Format{}, projects, "cb-1")
	if importertest.Roles(s) != "user assistant assistant" || s.Cwd != "/home/u/web" {
		t.Fatalf("session %s %q", importertest.Roles(s), s.Cwd)
	}
	r := s.Messages[1]
	if r.Parts[0].Type != loom.PartReasoning || r.Parts[1].Status != loom.ToolCompleted || string(r.Parts[1].Output) != `"12 passing"` {
		t.Errorf("reply %+v", r.Parts)
	}
	if r.Usage.InputTokens != 900 || r.Usage.CacheReadTokens != 400 || r.Usage.APICalls != 1 || s.Messages[2].Usage.OutputTokens != 12 {
		t.Errorf("usage %+v %+v", r.Usage, s.Messages[2].Usage)
	}
	sub := importertest.Session(t, res, "cb-1/agent-1")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != "cb-1" {
		t.Errorf("sub-agent %s of %q", sub.Kind, sub.ParentSourceID)
	}
	if res.Skipped["unknown:file-history-snapshot"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollows(t, Format{}, projects, 2, 5, filepath.Join("home-u-web", "cb-1.jsonl"),
		`{"id":"i7","type":"message","role":"user","content":"Thanks","timestamp":1772000020000}`)
	importertest.Malformed(t, Format{}, file, "s.jsonl")
}

// testdata/real is what CodeBuddy Code 2.117.0 (the codebuddy of
// @tencent-ai/agent-sdk 0.3.201, run offline against a fake model, a
// custom model of ~/.codebuddy/models.json, as TestImportRealCodeBuddy
// in cli/session runs it) wrote under ~/.codebuddy/projects, the home
// directory renamed /home/u: a reply with reasoning and cached tokens
// (hello), a file read (work/c2c33d95…), and a sub-agent followed by
// /compact and a turn (work/ec3f0311…).
var real = filepath.Join("testdata", "real")

// CodeBuddy 2.117's reasoning (rawContent's reasoning_text), its cached
// and reasoning tokens (the usage's details), /compact (its instruction
// no prompt, its answer a summary) and a sub-agent's link (the Agent
// call's result names it) are read.
func TestReadReal(t *testing.T) {
	res := importertest.ReadAllValid(t, Format{}, real)
	var hello, team *importer.Session
	for _, s := range res.Sessions {
		switch {
		case strings.HasPrefix(s.SourceID, "3d26085f"):
			hello = s
		case s.SourceID == "ec3f0311-ecb6-4e06-b069-d2e64dab7c74":
			team = s
		}
	}
	if hello == nil || team == nil {
		t.Fatalf("sessions %v", importertest.BundleNames(t, Format{}, real))
	}
	tl := importertest.TallyOf(hello)
	var u loom.Usage
	for _, m := range hello.Messages {
		u.Add(m.Usage)
	}
	if tl.Reasoning != 1 || u.InputTokens != 800 || u.CacheReadTokens != 200 || u.OutputTokens != 15 || u.ReasoningTokens != 5 || u.APICalls != 1 {
		t.Errorf("hello: %+v, usage %+v", tl, u)
	}
	tl = importertest.TallyOf(team)
	if tl.Roles[loom.RoleUser] != 2 || tl.Roles[loom.RoleSummary] != 1 || tl.Agents != 1 {
		t.Errorf("team: %+v (%s)", tl, importertest.Roles(team))
	}
	var sub *importer.Session
	for _, s := range res.Sessions {
		if s.Kind == loom.KindSubagent {
			sub = s
		}
	}
	for _, m := range team.Messages {
		for _, p := range m.Parts {
			if p.Type == loom.PartAgent && (sub == nil || p.SessionID != sub.SourceID || sub.ParentSourceID != team.SourceID) {
				t.Errorf("the agent part names %q; the sub-agent is %+v", p.SessionID, sub)
			}
		}
		if m.Role == loom.RoleUser && strings.Contains(m.Text(), "IMPORTANT CONSTRAINTS") {
			t.Errorf("/compact's instruction is a prompt")
		}
	}
}
