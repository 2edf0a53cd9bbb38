package team_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/report"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// member is one person's machine: a home of its own, a token of its own
// on the hub, reaching it through one of the hub's processes.
type member struct {
	name string
	fx   *clitest.Fixture
	tok  string
}

func (m *member) run(t *testing.T, args ...string) clitest.Result {
	t.Helper()
	return m.fx.Exec(t, "", args...)
}

func (m *member) must(t *testing.T, args ...string) string {
	t.Helper()
	r := m.run(t, args...)
	if r.Code != 0 {
		t.Fatalf("%s: loom %s: exit %d: %s%s", m.name, strings.Join(args, " "), r.Code, r.Stderr, r.Stdout)
	}
	return r.Stdout
}

// resume runs a turn of loom run --resume id with prompt as m, the
// model being the fake srv; a turn that fails fails the test.
func (m *member) resume(t *testing.T, srv *openaitest.Server, id, prompt string) {
	t.Helper()
	cmd := exec.Command(clitest.LoomBinary(t), "run", "--resume", id, prompt)
	cmd.Dir, cmd.Env = m.fx.Project, m.fx.BinEnv(clitest.ProviderEnv(srv)...)
	if r := clitest.ExecCmd(t, cmd, ""); r.Code != 0 {
		t.Fatalf("%s continues %s: exit %d: %s", m.name, id, r.Code, r.Stderr)
	}
}

// teamMCP runs loom mcp --team core as m and sends it, once initialized,
// the JSON-RPC lines of calls.
func (m *member) teamMCP(t *testing.T, calls string) clitest.Result {
	t.Helper()
	cmd := exec.Command(clitest.LoomBinary(t), "mcp", "--team", "core")
	cmd.Dir, cmd.Env = m.fx.Project, m.fx.BinEnv()
	return clitest.ExecCmd(t, cmd, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`+calls)
}

// invite makes an invite code to m's team, with more args (--machine,
// --label).
func (m *member) invite(t *testing.T, args ...string) string {
	t.Helper()
	var inv struct{ Code string }
	if err := json.Unmarshal([]byte(m.must(t, append([]string{"team", "invite", "--json"}, args...)...)), &inv); err != nil {
		t.Fatal(err)
	}
	return inv.Code
}

// admit has newcomer join m's team with an invite m makes with args.
func (m *member) admit(t *testing.T, newcomer *member, args ...string) {
	t.Helper()
	newcomer.must(t, "team", "join", m.invite(t, args...), "--yes")
}

func (m *member) teamState(t *testing.T, id string) *teamrun.State {
	t.Helper()
	s, err := teamrun.Local{Dir: filepath.Join(m.fx.Home, "data", "teams")}.Find(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hubToken makes a token of user in the hub's store.
func hubToken(t *testing.T, hubHome, hubDB, user string) string {
	t.Helper()
	fx := &clitest.Fixture{Home: hubHome}
	r := fx.Exec(t, "", "token", "create", "--db", hubDB, "--user", user, "--name", "team", "--json")
	if r.Code != 0 {
		t.Fatalf("token: %s", r.Stderr)
	}
	var out struct {
		Token string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || out.Token == "" {
		t.Fatalf("token: %q %v", r.Stdout, err)
	}
	return out.Token
}

// newMember is a machine whose project "api" has the remote every
// member's clone has, so that the project is one on every machine.
func newMember(t *testing.T, name, hubURL, tok string) *member {
	fx := clitest.NewEmptyFixture(t)
	os.WriteFile(filepath.Join(fx.Project, ".git", "config"), []byte("[remote \"origin\"]\n\turl = https://github.com/acme/api.git\n"), 0o644)
	os.WriteFile(filepath.Join(fx.Project, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	fx.ExtraEnv = []string{"LOOM_SYNC_HUB=" + hubURL, "LOOM_SYNC_TOKEN=" + tok, "LOOM_USER=" + name}
	return &member{name: name, fx: fx, tok: tok}
}

// importSession puts a session in m's project: a loom export line set
// with text and the model's reply.
func importSession(t *testing.T, m *member, id, title, prompt, reply string) {
	t.Helper()
	at := "2026-03-01T10:00:00.000Z"
	lines := []any{
		map[string]any{"type": "session", "session": map[string]any{"id": id, "key": "cli:api:" + id[:8], "title": title, "user_id": m.name, "surface": "cli", "kind": "main",
			"project": map[string]any{"id": "0000000000000000", "name": "api", "root": "/elsewhere/api"}, "created_at": at, "updated_at": at}},
		map[string]any{"type": "message", "message": map[string]any{"id": id[:30] + "000001", "session_id": id, "seq": 1, "role": "user", "created_at": at,
			"parts": []any{map[string]any{"id": "p1", "type": "text", "text": prompt}}}},
		map[string]any{"type": "message", "message": map[string]any{"id": id[:30] + "000002", "session_id": id, "seq": 2, "role": "assistant", "created_at": at, "model": "gpt-4o",
			"usage": map[string]any{"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.006},
			"parts": []any{map[string]any{"id": "p2", "type": "text", "text": reply}, map[string]any{"id": "p3", "type": "tool", "call_id": "c1", "name": "edit", "status": "completed", "input": map[string]any{"path": "deploy/cache.go"}, "output": "ok"}}}},
	}
	importLines(t, m, id, m.fx.Project, lines)
}

// importLines imports a session of loom export lines into m's store and
// moves it into project dir.
func importLines(t *testing.T, m *member, id, dir string, lines []any) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	f := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(f, []byte(b.String()), 0o644)
	m.must(t, "session", "import", f)
	m.must(t, "session", "move", id, dir)
}

// TestTeam runs a team through the built loom: a hub on PostgreSQL with
// two processes on one database, members on separate homes, each
// reaching it through either process.
func TestTeam(t *testing.T) {
	hubDB := clitest.FreshSchema(t)
	hub1, hubHome, _ := clitest.StartHub(t, hubDB)
	hub2 := clitest.StartServeProc(t, []string{"LOOM_HOME=" + t.TempDir(), "HOME=" + hubHome, "PATH=" + os.Getenv("PATH"), "LOOM_DB=" + hubDB}, "")
	tok := func(u string) string { return hubToken(t, hubHome, hubDB, u) }
	alice := newMember(t, "alice", hub1.Base, tok("alice"))
	bob := newMember(t, "bob", hub2.Base, tok("bob"))
	carol := newMember(t, "carol", hub1.Base, tok("carol"))
	dave := newMember(t, "dave", hub2.Base, tok("dave"))

	gen := secretstest.New(68)
	secret := gen.Secret("github-token")
	importSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c01", "flaky deploy of the wombat service",
		"why does the wombat deploy fail on a cold cache", "Pinned the cache key in deploy/cache.go; I used "+secret.Text)

	// Create, invite, join (bob through the hub's other process).
	var created struct{ ID, Admin string }
	json.Unmarshal([]byte(alice.must(t, "team", "create", "core", "--json")), &created)
	bobCode := alice.invite(t)
	r := bob.run(t, "team", "join", bobCode)
	if r.Code != 2 || !strings.Contains(r.Stderr, created.Admin) {
		t.Fatalf("a join off a terminal without --yes shows the admin's fingerprint and asks for --yes: %d %s", r.Code, r.Stderr)
	}
	bob.must(t, "team", "join", bobCode, "--yes")
	if r := carol.run(t, "team", "join", bobCode, "--yes"); r.Code == 0 || !strings.Contains(r.Stderr, "used already") {
		t.Fatalf("a second join with one invite: %d %s", r.Code, r.Stderr)
	}
	alice.admit(t, carol)

	// Invites expire and can be revoked: a join with either is refused
	// with one line, and the rotation at the revoke wraps no key for it.
	var short struct {
		Code    string
		Expires time.Time
	}
	json.Unmarshal([]byte(alice.must(t, "team", "invite", "--label", "erin", "--expires", "1s", "--json")), &short)
	for time.Now().Before(short.Expires.Add(time.Second)) {
		time.Sleep(100 * time.Millisecond) // until the invite's end has passed on every clock here
	}
	if r := dave.run(t, "team", "join", short.Code, "--yes"); r.Code != 1 || !strings.Contains(r.Stderr, "this invite expired on") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 1 {
		t.Fatalf("a join with an expired invite: %d %q", r.Code, r.Stderr)
	}
	// The newest key is wrapped for erin's invite, which expired unused:
	// the admin's next sync rotates it away.
	if out := alice.must(t, "team", "sync"); !strings.Contains(out, "rotated the team's key") {
		t.Fatalf("the admin's sync after an invite expired: %s", out)
	}
	if out := bob.must(t, "team", "sync"); strings.Contains(out, "rotated") {
		t.Fatalf("a member's sync rotated: %s", out)
	}
	frankCode := alice.invite(t)
	if out := alice.must(t, "team", "invite", "--revoke", frankCode); !strings.Contains(out, "revoked invite invite-") || !strings.Contains(out, "not wrapped for it") {
		t.Fatalf("the revoke: %s", out)
	}
	if r := dave.run(t, "team", "join", frankCode, "--yes"); r.Code != 1 || !strings.Contains(r.Stderr, "this invite was revoked") {
		t.Fatalf("a join with a revoked invite: %d %q", r.Code, r.Stderr)
	}
	{
		chain, _ := (&hub.Client{URL: hub1.Base, Token: alice.tok}).TeamChain(context.Background(), created.ID, 0)
		st, err := team.Verify(created.ID, created.Admin, chain)
		if err != nil {
			t.Fatal(err)
		}
		_, frank, _ := team.ParseCode(frankCode)
		_, erin, _ := team.ParseCode(short.Code)
		if st.Holders[st.Epoch][frank.Fingerprint()] || st.Holders[st.Epoch][erin.Fingerprint()] || st.Holders[2][erin.Fingerprint()] || st.Epoch != 3 || st.Stale {
			t.Fatalf("after the revoke: epoch %d, the revoked invite holds its key: %v", st.Epoch, st.Holders[st.Epoch][frank.Fingerprint()])
		}
	}
	invites := alice.must(t, "team", "invites")
	for _, w := range []string{"used", "revoked", "expired", "erin"} {
		if !strings.Contains(invites, w) {
			t.Fatalf("loom team invites lacks %q:\n%s", w, invites)
		}
	}

	// Carol adds her laptop: a machine with its own key pair (its own
	// home), under her hub user, invited by her and joined as hers.
	carol2 := newMember(t, "carol", hub2.Base, carol.tok)
	r = carol2.run(t, "team", "join", carol.invite(t, "--machine", "--label", "laptop"), "--yes")
	if r.Code != 0 || !strings.Contains(r.Stderr, "another machine of carol") || !strings.Contains(r.Stdout, "as carol's machine laptop") {
		t.Fatalf("carol's laptop joins: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	if out := alice.must(t, "team", "members"); !strings.Contains(out, "machine laptop") || !strings.Contains(out, "invited by carol") || strings.Count(out, "carol") != 2 {
		t.Fatalf("the members do not show carol's laptop as hers:\n%s", out)
	}
	// Bob's tablet joins, and the admin removes that machine alone.
	bob2 := newMember(t, "bob", hub1.Base, bob.tok)
	bob.admit(t, bob2, "--machine", "--label", "tablet")
	if out := alice.must(t, "team", "remove", "bob/tablet"); !strings.Contains(out, "removed tablet") {
		t.Fatalf("the removal of bob's tablet: %s", out)
	}
	if out := alice.must(t, "team", "members"); strings.Contains(out, "tablet") || !strings.Contains(out, "bob") {
		t.Fatalf("after the tablet's removal:\n%s", out)
	}
	if out := bob2.must(t, "team", "sync"); !strings.Contains(out, "no longer a member") {
		t.Fatalf("the removed tablet's sync: %s", out)
	}
	for _, m := range []*member{alice, bob, carol} {
		out := m.must(t, "team", "members")
		for _, n := range []string{"alice", "bob", "carol", created.Admin} {
			if !strings.Contains(out, n) {
				t.Fatalf("%s's members lack %s:\n%s", m.name, n, out)
			}
		}
	}

	// Nothing is shared before a share; the share previews and asks.
	alice.must(t, "team", "sync")
	bob.must(t, "team", "sync")
	if out := bob.run(t, "session", "list", "--team", "core", "--all-projects"); strings.Contains(out.Stdout, "wombat") {
		t.Fatal("a session reached the team before its project was shared")
	}
	r = alice.run(t, "team", "share", "--content")
	// A store that redacts on write holds the secret as a marker already:
	// the share has none left to redact.
	preview := "1 session, 2 messages, 1 secret redacted"
	if clitest.RedactingOnWrite() {
		preview = "1 session, 2 messages, 0 secrets redacted"
	}
	if r.Code != 2 || !strings.Contains(r.Stderr, preview) {
		t.Fatalf("the first share's preview: %d %s", r.Code, r.Stderr)
	}
	alice.must(t, "team", "share", "--content", "--yes")
	alice.must(t, "team", "sync")
	bob.must(t, "team", "sync")
	carol.must(t, "team", "sync")
	carol2.must(t, "team", "sync")
	if out := carol2.must(t, "search", "--team", "core", "wombat", "--all-projects"); !strings.Contains(out, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c01") {
		t.Fatalf("carol's laptop does not read the team: %s", out)
	}

	// Bob finds alice's session by search, reads it, recalls it.
	out := bob.must(t, "search", "--team", "core", "wombat cold cache", "--json")
	if !strings.Contains(out, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c01") {
		t.Fatalf("bob's team search: %s", out)
	}
	out = bob.must(t, "session", "list", "--team", "core")
	if !strings.Contains(out, "cli:@alice/") {
		t.Fatalf("the session does not say whose it is: %s", out)
	}
	// In JSON, whose it is is a field of its own, the key alice's own.
	for _, args := range [][]string{{"session", "list", "--team", "core", "--json"}, {"session", "show", "--team", "core", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c01", "--json"}} {
		var got struct {
			Key, Team, Member string
		}
		out = bob.must(t, args...)
		var list []json.RawMessage
		var shown struct{ Session json.RawMessage }
		if json.Unmarshal([]byte(out), &list) == nil && len(list) > 0 {
			out = string(list[0])
		} else if json.Unmarshal([]byte(out), &shown) == nil && shown.Session != nil {
			out = string(shown.Session)
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.Member != "alice" || got.Team != created.ID || strings.Contains(got.Key, "@") {
			t.Fatalf("loom %s: key %q, team %q, member %q (%v): %s", strings.Join(args, " "), got.Key, got.Team, got.Member, err, out)
		}
	}
	show := bob.must(t, "session", "show", "--team", "core", "0196a3b2", "--full-history")
	if !strings.Contains(show, "Pinned the cache key") || strings.Contains(show, secret.Value) || !strings.Contains(show, "[REDACTED:") {
		t.Fatalf("bob's view of alice's session:\n%s", show)
	}
	if out := bob.must(t, "recall", "--team", "core", "wombat deploy cold cache"); !strings.Contains(out, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c01") {
		t.Fatalf("bob's team recall: %s", out)
	}

	// …and so does an agent, through loom mcp --team.
	mcpOut := bob.teamMCP(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"wombat","all_projects":true}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"usage","arguments":{"by":"month","all_projects":true}}}
`)
	if !strings.Contains(mcpOut.Stdout, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c01") || strings.Contains(mcpOut.Stdout, secret.Value) {
		t.Fatalf("loom mcp --team: %s %s", mcpOut.Stdout, mcpOut.Stderr)
	}
	if !strings.Contains(mcpOut.Stdout, `"breakdown":"member"`) || !strings.Contains(mcpOut.Stdout, `"key":"alice"`) {
		t.Fatalf("loom mcp --team: the usage tool is not by member: %s", mcpOut.Stdout)
	}

	// Bob forks it and continues it as his own.
	fork := strings.TrimSpace(bob.must(t, "session", "fork", "--team", "core", "0196a3b2"))
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	bob.resume(t, srv, fork, "and on a warm cache?")
	sent, _ := json.Marshal(srv.Requests())
	if !strings.Contains(string(sent), "why does the wombat deploy fail") || strings.Contains(string(sent), secret.Value) {
		t.Fatalf("the model did not get alice's turns (or got the secret): %s", sent)
	}
	if out := bob.must(t, "session", "show", fork, "--json"); !strings.Contains(out, "forked from @alice") || !strings.Contains(out, `"message_count": 4`) {
		t.Fatalf("bob's fork: %s", out)
	}

	// The secret reached no teammate's machine by any file, nor the hub.
	for _, m := range []*member{bob, carol} {
		filepath.Walk(filepath.Join(m.fx.Home), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), secret.Value) {
					t.Errorf("%s's %s holds alice's secret", m.name, p)
				}
			}
			return nil
		})
	}
	pool, err := pgxpool.New(context.Background(), hubDB)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, w := range []string{"wombat", "deploy/cache.go", "flaky deploy", secret.Value, "api.git"} {
		var n int
		pool.QueryRow(context.Background(), `SELECT count(*) FROM team_records WHERE position(convert_to($1, 'UTF8') IN body) > 0 OR position(convert_to($1, 'UTF8') IN header) > 0`, w).Scan(&n)
		var c int
		pool.QueryRow(context.Background(), `SELECT count(*) FROM team_chain WHERE position(convert_to($1, 'UTF8') IN entry) > 0`, w).Scan(&c)
		if n+c > 0 {
			t.Errorf("the hub's team tables hold %q in the clear", w)
		}
	}

	// Bob shares the project too (his fork of alice's session, which he
	// continued, is in it). The team's usage, computed on any member's
	// machine, is the sum of the members' own reports, and by member
	// each member's own.
	bob.must(t, "team", "share", "--content", "--yes")
	bob.must(t, "team", "sync")
	carol.must(t, "team", "sync")
	var teamUsage struct {
		Total    loom.Usage
		ByMember []loom.UsageRow `json:"by_member"`
	}
	if err := json.Unmarshal([]byte(carol.must(t, "usage", "--team", "core", "--json")), &teamUsage); err != nil {
		t.Fatal(err)
	}
	var sum loom.Usage
	for _, m := range []*member{alice, bob} {
		var own loom.UsageReport
		json.Unmarshal([]byte(m.must(t, "usage", "--json")), &own)
		sum.Add(own.Total)
		found := false
		for _, r := range teamUsage.ByMember {
			if r.Key == m.name {
				found = true
				if r.Usage.InputTokens != own.Total.InputTokens || r.Usage.OutputTokens != own.Total.OutputTokens || math.Abs(r.Usage.CostUSD-own.Total.CostUSD) > 1e-9 {
					t.Errorf("the team's usage of %s %+v, %s's own %+v", m.name, r.Usage, m.name, own.Total)
				}
			}
		}
		if !found || own.Total.CostUSD == 0 {
			t.Errorf("no member row of %s (own cost %v): %+v", m.name, own.Total.CostUSD, teamUsage.ByMember)
		}
	}
	if teamUsage.Total.InputTokens != sum.InputTokens || teamUsage.Total.OutputTokens != sum.OutputTokens || math.Abs(teamUsage.Total.CostUSD-sum.CostUSD) > 1e-9 {
		t.Errorf("the team's usage %+v, the members' own summed %+v", teamUsage.Total, sum)
	}
	// The reports by time: each period's member parts are each member's
	// own report, to the token and the cent.
	for _, by := range []string{"daily", "monthly", "session"} {
		var tr report.Report
		if err := json.Unmarshal([]byte(carol.must(t, "usage", by, "--team", "core", "--tz", "UTC", "--json")), &tr); err != nil {
			t.Fatal(err)
		}
		if tr.Breakdown != report.ByMember {
			t.Fatalf("loom usage %s --team is not by member: %q", by, tr.Breakdown)
		}
		members := map[string]report.Totals{}
		for _, row := range tr.Rows {
			for _, p := range row.Breakdown {
				m := members[p.Key]
				m.InputTokens += p.InputTokens
				m.OutputTokens += p.OutputTokens
				c := m.Cost() + p.Cost()
				m.CostUSD = &c
				members[p.Key] = m
			}
		}
		for _, m := range []*member{alice, bob} {
			var own report.Report
			json.Unmarshal([]byte(m.must(t, "usage", by, "--tz", "UTC", "--json")), &own)
			got := members[m.name]
			if got.InputTokens != own.Total.InputTokens || got.OutputTokens != own.Total.OutputTokens || math.Abs(got.Cost()-own.Total.Cost()) > 1e-9 || own.Total.Cost() == 0 {
				t.Errorf("loom usage %s --team: %s's part %+v, %s's own total %+v", by, m.name, got, m.name, own.Total)
			}
		}
		if len(members) != 2 {
			t.Errorf("loom usage %s --team: members %v", by, members)
		}
	}
	var byAgent report.Report
	json.Unmarshal([]byte(carol.must(t, "usage", "monthly", "--team", "core", "--breakdown", "agent", "--json")), &byAgent)
	if byAgent.Breakdown != report.ByAgent || len(byAgent.Rows) == 0 || byAgent.Rows[0].Breakdown[0].Key != "cli" {
		t.Errorf("loom usage monthly --team --breakdown agent: %+v", byAgent)
	}
	if out := carol.must(t, "usage", "monthly", "--team", "core", "--breakdown", "member", "--csv"); !strings.Contains(out, "MEMBER") || !strings.Contains(out, "alice") || !strings.Contains(out, "bob") {
		t.Errorf("loom usage monthly --team --breakdown member --csv:\n%s", out)
	}
	if r := carol.run(t, "usage", "daily", "--breakdown", "member"); r.Code == 0 || !strings.Contains(r.Stderr, "--team") {
		t.Errorf("a breakdown by member of one's own sessions: %d %s", r.Code, r.Stderr)
	}

	// Updates after publish: alice renames a session, redacts a value
	// a rule she adds later finds, and deletes a session; bob's copies
	// follow at his next sync, and nothing of the old text stays in his
	// files.
	importSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c04", "koala migration", "migrate koala with ticket koala-ticket-93817", "Migrated koala; ticket koala-ticket-93817 is closed.")
	importSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c05", "emu cleanup", "clean up the emu cronjob", "Removed the emu cronjob.")
	alice.must(t, "team", "sync")
	bob.must(t, "team", "sync")
	if out := bob.must(t, "search", "--team", "core", "koala-ticket-93817", "--all-projects"); !strings.Contains(out, "koala") {
		t.Fatalf("bob lacks alice's koala session: %s", out)
	}
	// A turn more, sent; then taken back (rewind): the session is sent
	// again whole, and bob's copy has the one turn it keeps.
	alice.resume(t, srv, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c04", "and the rollback plan?")
	alice.must(t, "team", "sync")
	bob.must(t, "team", "sync")
	if out := bob.must(t, "session", "show", "--team", "core", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c04", "--json"); !strings.Contains(out, `"message_count": 4`) {
		t.Fatalf("bob's copy after alice's second turn: %s", out)
	}
	alice.must(t, "session", "rewind", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c04", "--turn", "1")
	clitest.WriteConfig(t, alice.fx, "[[secrets.rules]]\nid = \"koala-ticket\"\nregex = 'koala-ticket-[0-9]+'\nkeywords = [\"koala-ticket-\"]\n")
	alice.must(t, "secrets", "redact", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c04", "--yes")
	alice.must(t, "session", "rename", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c01", "wombat deploy, fixed")
	alice.must(t, "session", "delete", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c05", "--yes")
	if out := alice.must(t, "team", "sync"); !strings.Contains(out, "2 updated, 1 deleted") {
		t.Fatalf("alice's sync after the changes: %s", out)
	}
	if out := alice.must(t, "team", "sync"); !strings.Contains(out, "sent 0 records") {
		t.Fatalf("a sync with nothing changed sends again: %s", out)
	}
	bob.must(t, "team", "sync")
	if out := bob.must(t, "session", "show", "--team", "core", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c04"); strings.Contains(out, "93817") || !strings.Contains(out, "[REDACTED:koala-ticket]") {
		t.Fatalf("bob's copy of the redacted session:\n%s", out)
	}
	if out := bob.must(t, "session", "show", "--team", "core", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c04", "--json"); !strings.Contains(out, `"message_count": 2`) {
		t.Fatalf("bob's copy after alice's rewind: %s", out)
	}
	if out := bob.must(t, "session", "list", "--team", "core"); !strings.Contains(out, "wombat deploy, fixed") || strings.Contains(out, "emu cleanup") {
		t.Fatalf("bob's list after the rename and the deletion:\n%s", out)
	}
	if r := bob.run(t, "session", "show", "--team", "core", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c05"); r.Code == 0 {
		t.Fatalf("bob still holds the deleted session: %s", r.Stdout)
	}
	teamDir := filepath.Join(bob.fx.Home, "data", "teams", created.ID)
	filepath.Walk(teamDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "koala-ticket-93817") || strings.Contains(string(b), "emu cronjob") {
				t.Errorf("bob's %s still holds text alice redacted or deleted", p)
			}
		}
		return nil
	})

	// Carol's laptop shares its own sessions: they reach bob as carol's.
	importSession(t, carol2, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c06", "platypus audit", "audit the platypus logs", "The platypus logs are clean.")
	carol2.must(t, "team", "share", "--content", "--yes")
	carol2.must(t, "team", "sync")
	bob.must(t, "team", "sync")
	if out := bob.must(t, "session", "list", "--team", "core"); !strings.Contains(out, "platypus audit\tcli:@carol/") {
		t.Fatalf("bob lacks carol's laptop's session as hers:\n%s", out)
	}
	for _, l := range strings.Split(alice.must(t, "team", "members"), "\n") {
		if strings.Contains(l, "carol") && !strings.HasPrefix(strings.TrimSpace(l), "machine ") && !strings.Contains(l, "shares api (content)") {
			t.Fatalf("carol's laptop's share is not carol's: %s", l)
		}
	}

	// Alice removes carol; what alice writes after, carol's saved keys
	// (on both her machines) do not open.
	carolBefore := carol.teamState(t, created.ID)
	for ep, k := range carol2.teamState(t, created.ID).Keys {
		carolBefore.Keys[ep+100] = k
	}
	var removed struct{ Epoch int }
	json.Unmarshal([]byte(alice.must(t, "team", "remove", "carol", "--json")), &removed)
	importSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c02", "numbat rollout", "plan the numbat rollout", "Roll out numbat behind a flag.")
	alice.must(t, "team", "sync")
	bob.must(t, "team", "sync")
	if out := bob.must(t, "search", "--team", "core", "numbat", "--all-projects"); !strings.Contains(out, "numbat") {
		t.Fatalf("bob lacks what alice wrote after the removal: %s", out)
	}
	if out := carol.must(t, "team", "sync"); !strings.Contains(out, "no longer a member") {
		t.Fatalf("carol's sync after her removal: %s", out)
	}
	if out := carol.run(t, "search", "--team", "core", "numbat", "--all-projects"); strings.Contains(out.Stdout, "numbat") {
		t.Fatal("the removed member got what was written after her removal")
	}
	if out := carol2.must(t, "team", "sync"); !strings.Contains(out, "no longer a member") {
		t.Fatalf("carol's laptop's sync after her removal: %s", out)
	}
	if out := carol2.run(t, "search", "--team", "core", "numbat", "--all-projects"); strings.Contains(out.Stdout, "numbat") {
		t.Fatal("the removed member's laptop got what was written after her removal")
	}
	if out := carol.must(t, "search", "--team", "core", "wombat", "--all-projects"); !strings.Contains(out, "wombat") {
		t.Fatal("the removed member lost what she had synced before")
	}
	rows, err := pool.Query(context.Background(), `SELECT host_id, idx, epoch, header, body FROM team_records WHERE team_id = $1 AND epoch >= $2`, created.ID, removed.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	after := 0
	for rows.Next() {
		var rec team.Record
		rows.Scan(&rec.Host, &rec.Index, &rec.Epoch, &rec.Header, &rec.Body)
		after++
		for ep, k := range carolBefore.Keys {
			if _, err := envelope.Open(k, rec.Header, rec.Body[64:]); err == nil {
				t.Fatalf("carol's key of epoch %d opens record %d written after her removal", ep, rec.Index)
			}
		}
	}
	if after == 0 {
		t.Fatal("no record was written after the removal")
	}

	// Team B: dave's; alice is no member and reads nothing of it.
	var other struct{ ID string }
	json.Unmarshal([]byte(dave.must(t, "team", "create", "other", "--json")), &other)
	importSession(t, dave, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c03", "quokka billing", "why is quokka billing off", "Rounding in quokka.")
	dave.must(t, "team", "share", "--content", "--yes")
	dave.must(t, "team", "sync")
	c := &hub.Client{URL: hub1.Base, Token: alice.tok}
	if _, _, err := c.Team(other.ID).Records(context.Background(), "x", 0, 10); err == nil {
		t.Fatal("a member of team A read team B's records")
	}
	var hosts []string
	rows, _ = pool.Query(context.Background(), `SELECT header, body FROM team_records WHERE team_id = $1`, other.ID)
	for rows.Next() {
		var h, b []byte
		rows.Scan(&h, &b)
		hosts = append(hosts, string(h))
		for _, k := range alice.teamState(t, created.ID).Keys {
			if _, err := envelope.Open(k, h, b[64:]); err == nil {
				t.Fatal("team A's key opens team B's record")
			}
		}
	}
	if len(hosts) == 0 {
		t.Fatal("team B wrote nothing")
	}

	// An operator adds mallory to the members table: she reads
	// ciphertext she cannot open, no member lists her, and what she
	// writes no member applies.
	mallory := newMember(t, "mallory", hub1.Base, tok("mallory"))
	if _, err := pool.Exec(context.Background(), `INSERT INTO team_members (team_id, member, user_id) VALUES ($1, 'ffff', 'mallory')`, created.ID); err != nil {
		t.Fatal(err)
	}
	if out := alice.must(t, "team", "members"); strings.Contains(out, "mallory") {
		t.Fatal("a row in the hub's table made mallory a member")
	}
	mid, _ := team.NewIdentity()
	key, _ := envelope.NewKey()
	pl, _ := json.Marshal(teamrun.Outgoing(team.ModeContent, &loom.Session{ID: "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c09", Key: "cli:x", Surface: "cli"}, nil))
	rec, err := team.SealRecord(team.Header{Team: created.ID, Host: "m411", Index: 1, Epoch: 2, Author: mid.Fingerprint()}, team.Keyring{2: key}, mid, pl)
	if err != nil {
		t.Fatal(err)
	}
	// The hub refuses her push (no member of the chain signed it); the
	// operator files it in the records table by hand.
	if _, err := putRecords(hub1.Base, mallory.tok, created.ID, rec); loom.ErrorCode(err) != "forbidden" {
		t.Fatalf("mallory, let in by the row, pushes: %v", err)
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO team_records (team_id, host_id, idx, epoch, header, body, received_at) VALUES ($1, $2, 1, 2, $3, $4, now())`, created.ID, rec.Host, rec.Header, rec.Body); err != nil {
		t.Fatal(err)
	}
	if r := bob.run(t, "team", "sync"); r.Code != 0 || !strings.Contains(r.Stderr, "no member") || !strings.Contains(r.Stderr, "set aside") {
		t.Fatalf("bob's sync with mallory's record on the hub: %d %s", r.Code, r.Stderr)
	}

	// Forged, replayed and re-ordered chains: every client refuses them.
	sql := func(q string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(context.Background(), q, args...); err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	pool.QueryRow(context.Background(), `SELECT max(seq) FROM team_chain WHERE team_id = $1`, created.ID).Scan(&n)
	refused := func(what string) {
		t.Helper()
		for _, m := range []*member{alice, bob} {
			r := m.run(t, "team", "members")
			if r.Code == 0 || !strings.Contains(r.Stderr, "not valid") {
				t.Errorf("%s: %s's client took it: %d %s%s", what, m.name, r.Code, r.Stdout, r.Stderr)
			}
		}
	}
	// Replayed: the invite entry again at the end.
	sql(`INSERT INTO team_chain SELECT team_id, $2, entry, now() FROM team_chain WHERE team_id = $1 AND seq = 2`, created.ID, n+1)
	refused("a replayed entry")
	sql(`DELETE FROM team_chain WHERE team_id = $1 AND seq = $2`, created.ID, n+1)
	// Forged: an invite signed by someone else than the admin.
	chain, _ := (&hub.Client{URL: hub1.Base, Token: alice.tok}).TeamChain(context.Background(), created.ID, 0)
	st, err := team.Verify(created.ID, created.Admin, chain)
	if err != nil {
		t.Fatal(err)
	}
	fe := st.NewEntry(team.KindInvite, st.Admin, clitest.Base)
	fe.Invite = mid.Public("x", "")
	fe.Keys = map[string][]byte{fe.Invite.Fingerprint(): []byte("k")}
	forged, _ := team.Sign(fe, mid)
	sql(`INSERT INTO team_chain VALUES ($1, $2, $3, now())`, created.ID, n+1, forged)
	refused("a forged entry")
	sql(`DELETE FROM team_chain WHERE team_id = $1 AND seq = $2`, created.ID, n+1)
	// Re-ordered: two entries swapped.
	swap := func() {
		sql(`UPDATE team_chain SET seq = -2 WHERE team_id = $1 AND seq = 2`, created.ID)
		sql(`UPDATE team_chain SET seq = 2 WHERE team_id = $1 AND seq = 3`, created.ID)
		sql(`UPDATE team_chain SET seq = 3 WHERE team_id = $1 AND seq = -2`, created.ID)
	}
	swap()
	// Behind the head a client verified, re-ordered entries are never
	// read again (its checkpoint holds what it verified, and the entry
	// at its head names the one before it by hash): its commands go on
	// from what it verified. Whoever reads the chain from its genesis
	// refuses it (loom team fork reads it whole, as does a joiner).
	for _, m := range []*member{alice, bob} {
		if r := m.run(t, "team", "members"); r.Code != 0 || !strings.Contains(r.Stdout, fmt.Sprintf("%d chain entries verified", n)) {
			t.Errorf("re-ordered entries behind %s's checkpoint: %d %s%s", m.name, r.Code, r.Stdout, r.Stderr)
		}
		if r := m.run(t, "team", "fork"); r.Code == 0 || !strings.Contains(r.Stderr, "not valid") {
			t.Errorf("re-ordered entries: %s's client, reading the chain whole, took it: %d %s%s", m.name, r.Code, r.Stdout, r.Stderr)
		}
	}
	swap()
	// Dropped from the end: a client that verified it before refuses.
	sql(`DELETE FROM team_chain WHERE team_id = $1 AND seq = $2`, created.ID, n)
	refused("a dropped entry")
}
