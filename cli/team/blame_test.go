package team_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/gittest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/report"
)

// cloneMember is a member whose project is a real clone of origin.
func cloneMember(t *testing.T, name, hubURL, tok, origin string) *member {
	t.Helper()
	m := newMember(t, name, hubURL, tok)
	if err := os.RemoveAll(m.fx.Project); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, filepath.Dir(m.fx.Project), time.Time{}, "clone", "-q", origin, m.fx.Project)
	if real, err := filepath.EvalSymlinks(m.fx.Project); err == nil {
		m.fx.Project = real
	}
	return m
}

func (m *member) git(t *testing.T, args ...string) string {
	t.Helper()
	return gittest.Git(t, m.fx.Project, time.Time{}, args...)
}

// claudeWrites has m's Claude Code write rel with content in a session
// of its own (a Claude Code session file, imported), and writes the
// file. It returns the session's id in loom.
func claudeWrites(t *testing.T, m *member, id, prompt, rel, content string) string {
	t.Helper()
	at := time.Now().Add(-time.Minute).UTC()
	ts := func(d int) string { return at.Add(time.Duration(d) * time.Second).Format(time.RFC3339Nano) }
	base := func(uuid, parent, typ string, d int) map[string]any {
		r := map[string]any{"type": typ, "uuid": uuid, "sessionId": id, "cwd": m.fx.Project, "timestamp": ts(d),
			"version": "2.1.39", "gitBranch": "feature", "userType": "external", "isSidechain": false}
		if parent != "" {
			r["parentUuid"] = parent
		} else {
			r["parentUuid"] = nil
		}
		return r
	}
	usage := map[string]any{"input_tokens": 1000, "output_tokens": 200}
	u1 := base(id[:8]+"-u1", "", "user", 0)
	u1["message"] = map[string]any{"role": "user", "content": prompt}
	a1 := base(id[:8]+"-a1", id[:8]+"-u1", "assistant", 1)
	a1["message"] = map[string]any{"id": "msg_" + id[:8] + "1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "usage": usage,
		"content": []any{map[string]any{"type": "tool_use", "id": "toolu_" + id[:8], "name": "Write",
			"input": map[string]any{"file_path": filepath.Join(m.fx.Project, rel), "content": content}}}}
	u2 := base(id[:8]+"-u2", id[:8]+"-a1", "user", 2)
	u2["message"] = map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_" + id[:8], "content": "File created successfully"}}}
	a2 := base(id[:8]+"-a2", id[:8]+"-u2", "assistant", 3)
	a2["message"] = map[string]any{"id": "msg_" + id[:8] + "2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "usage": usage,
		"content": []any{map[string]any{"type": "text", "text": "Wrote " + rel + "."}}}
	var b strings.Builder
	for _, l := range []any{u1, a1, u2, a2} {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	f := filepath.Join(t.TempDir(), id+".jsonl")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m.must(t, "session", "import", "--from", "claude-code", f)
	gittest.Write(t, m.fx.Project, rel, content)
	var list []struct{ ID, Title string }
	json.Unmarshal([]byte(m.must(t, "session", "list", "--json")), &list)
	for _, s := range list {
		if s.Title == prompt {
			return s.ID
		}
	}
	t.Fatalf("%s: no session %q was imported: %+v", m.name, prompt, list)
	return ""
}

// TestTeamBlame: members' agents write different files of one
// repository, each in a session of their own, shared with the team; on
// a third member's machine loom blame names for each agent line the
// member whose session wrote it, and loom blame pr --team counts each
// member's lines and sessions exactly. A fork of a teammate's session
// leaves the lines to the teammate's session.
func TestTeamBlame(t *testing.T) {
	hubDB := clitest.FreshSchema(t)
	hub1, hubHome, _ := clitest.StartHub(t, hubDB)
	hub2 := clitest.StartServeProc(t, []string{"LOOM_HOME=" + t.TempDir(), "HOME=" + hubHome, "PATH=" + os.Getenv("PATH"), "LOOM_DB=" + hubDB}, "")

	// The repository: a bare origin with one human commit on main.
	origin := filepath.Join(t.TempDir(), "calc.git")
	gittest.Git(t, filepath.Dir(origin), time.Time{}, "init", "-q", "--bare", "-b", "main", origin)
	seed := gittest.Init(t)
	gittest.Write(t, seed, "README.md", "# calc\n")
	gittest.Git(t, seed, time.Time{}, "add", "-A")
	gittest.Git(t, seed, time.Time{}, "commit", "-qm", "start")
	gittest.Git(t, seed, time.Time{}, "push", "-q", origin, "main")

	alice := cloneMember(t, "alice", hub1.Base, hubToken(t, hubHome, hubDB, "alice"), origin)
	bob := cloneMember(t, "bob", hub2.Base, hubToken(t, hubHome, hubDB, "bob"), origin)
	carol := cloneMember(t, "carol", hub1.Base, hubToken(t, hubHome, hubDB, "carol"), origin)

	// alice's agent writes add.go (5 lines), bob's mul.go (4 lines), and
	// bob writes notes.txt himself (2 lines), on one branch.
	alice.git(t, "checkout", "-q", "-b", "feature")
	aliceID := claudeWrites(t, alice, "a11ce000-0000-4000-8000-000000000001", "Add an Add function to calc.", "calc/add.go",
		"package calc\n\n// Add adds two numbers for the wombat ledger.\nfunc Add(a, b int) int { return a + b }\n// end of add\n")
	alice.git(t, "add", "-A")
	alice.git(t, "commit", "-qm", "add")
	alice.git(t, "push", "-q", "origin", "feature")
	bob.git(t, "fetch", "-q", "origin")
	bob.git(t, "checkout", "-q", "-b", "feature", "origin/feature")
	bobID := claudeWrites(t, bob, "b0b00000-0000-4000-8000-000000000002", "Add a Mul function to calc.", "calc/mul.go",
		"package calc\n\n// Mul multiplies two numbers for the numbat ledger.\nfunc Mul(a, b int) int { return a * b }\n")
	gittest.Write(t, bob.fx.Project, "calc/notes.txt", "Bob's own notes on calc.\nNo agent wrote these two.\n")
	bob.git(t, "add", "-A")
	bob.git(t, "commit", "-qm", "mul and notes")
	bob.git(t, "push", "-q", "origin", "feature")
	carol.git(t, "fetch", "-q", "origin")
	carol.git(t, "checkout", "-q", "-b", "feature", "origin/feature")

	// The team: alice and bob share the project; carol syncs.
	var created struct{ ID string }
	json.Unmarshal([]byte(alice.must(t, "team", "create", "core", "--json")), &created)
	for _, m := range []*member{bob, carol} {
		alice.admit(t, m)
	}
	for _, m := range []*member{alice, bob} {
		m.must(t, "team", "share", "--content", "--yes")
		m.must(t, "team", "sync")
	}
	carol.must(t, "team", "sync")

	// Without the team's sessions, no line is an agent's.
	var own blame.PR
	if err := json.Unmarshal([]byte(carol.must(t, "blame", "pr", "main..feature", "--no-team", "--json")), &own); err != nil {
		t.Fatal(err)
	}
	if own.Lines.Total != 11 || own.Lines.Agent != 0 || own.ByMember != nil {
		t.Fatalf("carol's own sessions wrote none of it: %+v %v", own.Lines, own.ByMember)
	}

	checkPR := func(who string) {
		t.Helper()
		var pr blame.PR
		if err := json.Unmarshal([]byte(carol.must(t, "blame", "pr", "main..feature", "--team", "core", "--json")), &pr); err != nil {
			t.Fatal(err)
		}
		if pr.Lines.Total != 11 || pr.Lines.Agent != 9 || pr.Lines.Human != 2 {
			t.Fatalf("%s: the pull request's lines: %+v", who, pr.Lines)
		}
		if pr.ByMember["alice"].Agent != 5 || pr.ByMember["bob"].Agent != 4 || len(pr.ByMember) != 2 {
			t.Fatalf("%s: by member: %+v", who, pr.ByMember)
		}
		got := map[string]string{}
		for _, s := range pr.Sessions {
			got[s.SessionID] = s.Member
			if s.CostUSD <= 0 || s.Title == "" {
				t.Errorf("%s: session %s has no cost or title: %+v", who, s.SessionID, s)
			}
		}
		if len(got) != 2 || got[aliceID] != "alice" || got[bobID] != "bob" {
			t.Fatalf("%s: the sessions behind the lines: %+v", who, pr.Sessions)
		}
		var res blame.Result
		json.Unmarshal([]byte(carol.must(t, "blame", "calc/add.go", "--json")), &res)
		for _, l := range res.Lines {
			if l.Kind != blame.Agent || l.SessionID != aliceID || l.Member != "alice" {
				t.Fatalf("%s: line %d of add.go: %+v", who, l.N, l)
			}
		}
	}
	checkPR("shared")
	out := carol.must(t, "blame", "pr", "main..feature")
	for _, w := range []string{"by member", "alice", "bob", "@alice", "@bob"} {
		if !strings.Contains(out, w) {
			t.Errorf("loom blame pr lacks %q:\n%s", w, out)
		}
	}
	if out := carol.must(t, "blame", "calc/mul.go:4"); !strings.Contains(out, "member bob") || !strings.Contains(out, "numbat") ||
		!strings.Contains(out, "--team core") {
		t.Errorf("one line of bob's: %s", out)
	}

	// The acceptance's flow: carol finds alice's session by search,
	// recalls it, forks it and continues it as her own; her fork holds
	// alice's edits in a session of her own, and the lines stay alice's
	// session's.
	if out := carol.must(t, "search", "--team", "core", "Add function", "--json"); !strings.Contains(out, aliceID) {
		t.Fatalf("carol's search: %s", out)
	}
	if out := carol.must(t, "recall", "--team", "core", "Add function to calc"); !strings.Contains(out, aliceID) {
		t.Fatalf("carol's recall: %s", out)
	}
	fork := strings.TrimSpace(carol.must(t, "session", "fork", "--team", "core", aliceID))
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	carol.resume(t, srv, fork, "and a Sub function?")
	checkPR("after carol's fork")
	// A teammate's session was shared with the team, not with whoever
	// holds a link: blame pr --share publishes none of them.
	r := carol.run(t, "blame", "pr", "main..feature", "--team", "core", "--share", "--yes", "--json")
	var shared blame.PR
	if err := json.Unmarshal([]byte(r.Stdout), &shared); r.Code != 0 || err != nil || strings.Count(r.Stderr, "is a teammate's (team core)") != 2 {
		t.Fatalf("carol's blame pr --share: exit %d, %v, %s", r.Code, err, r.Stderr)
	}
	for _, ps := range shared.Sessions {
		if ps.Share != "" {
			t.Errorf("carol's blame pr --share published a teammate's session %s: %s", ps.SessionID, ps.Share)
		}
	}
	// loom serve --team: the team's usage by member, as the API gives it.
	srvTeam := clitest.StartServeProcArgs(t, carol.fx.BinEnv(), "", "--team", "core")
	resp := srvTeam.Request(t, "GET", "/api/v1/usage?by=month&breakdown=member", "")
	var rep report.Report
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	members := map[string]int64{}
	for _, row := range rep.Rows {
		for _, p := range row.Breakdown {
			members[p.Key] += p.InputTokens
		}
	}
	if resp.StatusCode != 200 || len(members) != 2 || members["alice"] == 0 || members["bob"] == 0 {
		t.Errorf("loom serve --team: GET /api/v1/usage?breakdown=member: %d %v", resp.StatusCode, members)
	}
	if r := carol.run(t, "blame", "pr", "main..feature", "--team", "nope"); r.Code == 0 || !strings.Contains(r.Stderr, `no team "nope"`) {
		t.Errorf("--team of no team: %d %s", r.Code, r.Stderr)
	}

	// dave shares the project as aggregates only: his agent's lines are
	// no one's session's on carol's machine (the records hold no edit),
	// his usage counts, and no text of his reaches her.
	dave := cloneMember(t, "dave", hub2.Base, hubToken(t, hubHome, hubDB, "dave"), origin)
	alice.admit(t, dave)
	dave.git(t, "checkout", "-q", "-b", "feature", "origin/feature")
	claudeWrites(t, dave, "da7e0000-0000-4000-8000-000000000004", "Add a Div function to calc.", "calc/div.go",
		"package calc\n\n// Div divides two numbers for the quokka ledger.\nfunc Div(a, b int) int { return a / b }\n")
	dave.git(t, "add", "-A")
	dave.git(t, "commit", "-qm", "div")
	dave.git(t, "push", "-q", "origin", "feature")
	dave.must(t, "team", "share", "--aggregates", "--yes")
	dave.must(t, "team", "sync")
	carol.git(t, "pull", "-q", "--ff-only", "origin", "feature")
	carol.must(t, "team", "sync")
	var pr blame.PR
	json.Unmarshal([]byte(carol.must(t, "blame", "pr", "main..feature", "--json")), &pr)
	if pr.Lines.Total != 15 || pr.Lines.Agent != 9 || pr.Lines.Human != 6 || len(pr.ByMember) != 2 || pr.ByMember["dave"].Total != 0 {
		t.Errorf("an aggregates-only member's lines: %+v %+v", pr.Lines, pr.ByMember)
	}
	var daily report.Report
	json.Unmarshal([]byte(carol.must(t, "usage", "daily", "--team", "core", "--json")), &daily)
	var daveTokens int64
	for _, row := range daily.Rows {
		for _, p := range row.Breakdown {
			if p.Key == "dave" {
				daveTokens += p.InputTokens
			}
		}
	}
	if daveTokens != 2000 {
		t.Errorf("dave's aggregates-only usage on carol's machine: %d input tokens, want 2000", daveTokens)
	}
	if out := carol.run(t, "search", "--team", "core", "quokka", "--all-projects"); strings.Contains(out.Stdout, "quokka") {
		t.Errorf("text of an aggregates-only project reached a teammate: %s", out.Stdout)
	}
	filepath.Walk(filepath.Join(carol.fx.Home, "data", "teams"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "quokka") || strings.Contains(string(b), "Div divides") {
				t.Errorf("carol's %s holds text of dave's aggregates-only project", p)
			}
		}
		return nil
	})
}
