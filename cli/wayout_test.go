package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/embedding/embeddingtest"
	"github.com/loomhq/loom/handoff"
	hubpkg "github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/importer/agents"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/gittest"
	"github.com/loomhq/loom/internal/testkit/syncio"
	"github.com/loomhq/loom/mcp"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/share"
	"github.com/loomhq/loom/summarize"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

// TestEveryWayOut plants, in a real store, a session whose secrets sit
// where they are hardest to keep (beside the words a search highlights,
// in a title cut in the middle of a key, in a tool output stored as
// escaped JSON, in PEM blocks, in a tool's input, in MEMORY.md), then
// takes every way stored text has out of the machine and looks for the
// secrets in every byte that left, as sent and decoded (JSON, HTML and
// URL escapes undone).
//
// Every way out is a row of the table: gated (it redacts) or inside (it
// does not, and the row says why). The MCP tools loom mcp lists, every
// command of loom's command line and every route loom serve registers
// must be classified, so that a way out added without being thought
// about fails here.
func TestEveryWayOut(t *testing.T) {
	t.Parallel()
	sec := newPlanted(t)
	hubSrv, hubHome, syncEnv := clitest.StartHub(t, "")
	ways := waysOut(sec, hubSrv, hubHome, syncEnv)
	byName := map[string]*wayOut{}
	for i := range ways {
		w := &ways[i]
		if byName[w.name] != nil {
			t.Fatalf("two rows are named %q", w.name)
		}
		if (w.inside == "") == (w.run == nil) {
			t.Fatalf("row %q: a gated row runs the way out, an inside row says why it is not gated", w.name)
		}
		byName[w.name] = w
	}

	t.Run("every MCP tool has a row", func(t *testing.T) {
		t.Parallel()
		w := plant(t, sec)
		m := startMCP(t, w)
		res, err := m.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		m.finish(t)
		listed := map[string]bool{}
		for _, tl := range res.Tools {
			listed[tl.Name] = true
			if byName["mcp stdio: "+tl.Name] == nil {
				t.Errorf("loom mcp lists the tool %s, which no row of TestEveryWayOut takes: add one (gated), or say why it lets nothing out", tl.Name)
			}
		}
		for _, r := range ways {
			if tool, ok := strings.CutPrefix(r.name, "mcp stdio: "); ok && !strings.Contains(tool, " ") && !listed[tool] {
				t.Errorf("row %q: loom mcp (with [mcp] handoff = true) lists no such tool", r.name)
			}
		}
	})

	t.Run("every command is classified", func(t *testing.T) {
		t.Parallel()
		root := cli.NewRootCmd(command.NewInvocation(&cli.Factory{IO: &term.IOStreams{}}))
		seen := map[string]bool{}
		var walk func(c *cobra.Command)
		walk = func(c *cobra.Command) {
			if c.Name() == "help" || c.Name() == "completion" {
				return
			}
			if c.Runnable() {
				path := c.CommandPath()
				seen[path] = true
				if k, ok := commandWays[path]; ok {
					checkClass(t, path, k, byName)
				} else {
					t.Errorf("%s is not classified in commandWays: say whether it lets stored text out (gated, with the rows that check it), shows it to the user only (inside, why), or prints none", path)
				}
			}
			for _, sub := range c.Commands() {
				walk(sub)
			}
		}
		walk(root)
		for path := range commandWays {
			if !seen[path] {
				t.Errorf("commandWays classifies %s, which is no command", path)
			}
		}
	})

	t.Run("every route is classified", func(t *testing.T) {
		t.Parallel()
		routes := server.New(server.Config{MCP: &mcp.Config{}, Blame: &server.BlameConfig{}, Team: &server.TeamConfig{}}).Routes()
		if len(routes) < 20 || !slices.Contains(routes, "/mcp") {
			t.Fatalf("the server lists %d routes: %q", len(routes), routes)
		}
		for _, r := range routes {
			if k, ok := routeWays[r]; ok {
				checkClass(t, r, k, byName)
			} else {
				t.Errorf("the route %q is not classified in routeWays: say whether it lets stored text out (gated, with the rows that check it), answers the token's user only (inside, why), or sends none", r)
			}
		}
		for r := range routeWays {
			if !slices.Contains(routes, r) {
				t.Errorf("routeWays classifies %q, which the server does not register", r)
			}
		}
	})

	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			if w.inside != "" {
				t.Logf("inside: %s", w.inside)
				if w.check != nil {
					w.check(t, plant(t, sec))
				}
				return
			}
			wd := plant(t, sec)
			out := w.run(t, wd)
			checkSent(t, out, wd, w.want)
		})
	}
}

// wayOut is a row of the table: a way stored text leaves the machine.
type wayOut struct {
	name string
	// inside says why this way is not gated; empty for a gated way.
	inside string
	// run takes a gated way on a store holding the planted session and
	// returns every byte that left.
	run func(t *testing.T, w *world) []sent
	// want is what the bytes must hold to show that they carried the
	// planted session (default: a redaction marker).
	want string
	// check, for an inside row, checks what the row says of itself.
	check func(t *testing.T, w *world)
}

// sent is one piece of what a way out let out: its bytes and what they
// were (a process's output, a file, a request).
type sent struct {
	what string
	data []byte
}

func sentString(what, s string) sent { return sent{what, []byte(s)} }

// class is how a command or a route is classified: by the rows of the
// table that take it (gated ways, checked; inside ways, with their
// reasons), or by why it lets no stored text out at all.
type class struct {
	rows  []string
	quiet string
}

// by classifies by rows; a row name ending in "…" stands for every row
// it begins.
func by(rows ...string) class { return class{rows: rows} }
func quiet(why string) class  { return class{quiet: why} }

func checkClass(t *testing.T, what string, k class, rows map[string]*wayOut) {
	t.Helper()
	if (len(k.rows) == 0) == (k.quiet == "") {
		t.Errorf("%s: classify it by its rows, or say why it lets no stored text out", what)
	}
	for _, r := range k.rows {
		found := rows[r] != nil
		if prefix, ok := strings.CutSuffix(r, "…"); ok {
			for name := range rows {
				found = found || strings.HasPrefix(name, prefix)
			}
		}
		if !found {
			t.Errorf("%s is classified by the row %q, which the table does not have", what, r)
		}
	}
}

// Rows shared by several commands and routes.
const (
	rowShown      = "shown to the user: session show and list, search, replay"
	rowUsage      = "loom usage"
	rowLogs       = "loom log stream"
	rowAPI        = "the API, /api/v1/…"
	rowDashboard  = "the dashboard's pages"
	rowContinue   = "continuing a session: its own history to its model"
	rowLossless   = "loom session export --format json, jsonl"
	rowSync       = "loom sync"
	rowShareBlob  = "the share's ciphertext and page at the hub"
	rowScan       = "loom secrets scan"
	rowAgent      = "loom run: the agent's session_search and memory"
	rowShare      = "loom share"
	rowTeam       = "loom team sync: the records a team's members open"
	rowDownload   = "the dashboard's download: GET /s/{id}/export.html"
	rowMCPHTTP    = "mcp http: /mcp of loom serve"
	rowEmbed      = "loom embed"
	rowSummaries  = "loom session summarize"
	rowTrace      = "loom blame trace export"
	rowPR         = "loom blame pr"
	rowRecall     = "loom recall"
	rowHookClaude = "loom recall --hook claude-code"
	rowHookGemini = "loom recall --hook gemini"
	rowMarkdown   = "loom session export --format markdown"
	rowHTML       = "loom session export --format html"
	rowRestoreTo  = "loom session restore-to"
)

var mcpRows = []string{"mcp stdio: search_sessions", "mcp stdio: search_sessions by meaning", "mcp stdio: list_sessions",
	"mcp stdio: read_session", "mcp stdio: recall", "mcp stdio: usage", "mcp stdio: memory", "mcp stdio: handoff", "mcp stdio: blame"}

// commandWays classifies every command of loom's command line.
var commandWays = map[string]class{
	"loom":                    by(rowAgent, rowContinue),
	"loom chat":               by(rowAgent, rowContinue),
	"loom run":                by(rowAgent, rowContinue),
	"loom embed":              by(rowEmbed),
	"loom mcp":                by(mcpRows...),
	"loom recall":             by(rowRecall, rowHookClaude, rowHookGemini),
	"loom serve":              by(rowMCPHTTP, rowDownload, rowAgent, rowAPI, rowDashboard, rowShareBlob, rowSync, rowSummaries, rowEmbed),
	"loom session export":     by(rowMarkdown, rowHTML, rowLossless),
	"loom session handoff":    by("loom session handoff --to …"),
	"loom session restore-to": by(rowRestoreTo),
	"loom session summarize":  by(rowSummaries),
	"loom session import":     by(rowSummaries), // --watch summarises; nothing else leaves
	"loom session reimport":   quiet("reads the kept originals into the user's own store, and prints counts and the problems' files and lines"),
	"loom share":              by(rowShare, rowShareBlob),
	"loom share list":         by(rowShare),
	"loom sync":               by(rowSync),
	"loom team sync":          by(rowTeam),
	"loom team share":         by(rowTeam), // its preview prints counts only
	"loom team create":        quiet("signs the team's first entry: names, public keys, a wrapped key"),
	"loom team invite":        quiet("prints an invite code: the hub, the team, keys"),
	"loom team invites":       quiet("prints the invites' labels, fingerprints, makers and dates"),
	"loom team join":          quiet("signs a join: names, public keys, a wrapped key"),
	"loom team members":       quiet("prints members' names and fingerprints and shared projects' names"),
	"loom team remove":        quiet("signs a removal and a new wrapped key"),
	"loom team leave":         quiet("signs a leave"),
	"loom team unshare":       quiet("signs an unshare, the project sealed"),
	"loom team list":          quiet("prints the teams this machine is in"),
	"loom team doctor":        quiet("prints the records its syncs set aside: writer ids, indexes, members' names and why, from this machine's state"),
	"loom team head":          quiet("prints the verified chain's head: its number, hash and epoch"),
	"loom team fork":          quiet("prints the chain heads this machine verified and the hub shows: numbers, hashes, epochs; re-anchors on the one chosen"),
	"loom team budget":        quiet("prints the team's budgets per member: counts and sizes; the admin signs an entry setting them"),
	"loom team set-hub":       quiet("reads and verifies the chain at the new address, sends nothing stored, and prints the addresses and the chain's length"),
	"loom session resume":     by(rowContinue),
	"loom session show":       by(rowShown),
	"loom blame":              by(rowShown),
	"loom blame commits":      by(rowShown),
	"loom blame summary":      by(rowShown),
	"loom blame trace export": by(rowTrace),
	"loom blame pr":           by(rowPR),
	"loom blame notes":        quiet("writes session ids, agents' and models' names and line numbers as git notes: no text of a conversation"),
	"loom blame trace":        quiet("prints its help"),
	"loom blame observe":      quiet("run by agents' hooks: records which files a shell call changed and their changed lines beside the store; prints nothing"),
	"loom session list":       by(rowShown),
	"loom search":             by(rowShown),
	"loom replay":             by(rowShown),
	"loom log stream":         by(rowLogs),
	"loom secrets scan":       by(rowScan),
	"loom usage":              by(rowUsage),
	"loom usage blocks":       by(rowUsage),
	"loom usage daily":        by(rowUsage),
	"loom usage weekly":       by(rowUsage),
	"loom usage monthly":      by(rowUsage),
	"loom usage session":      by(rowUsage),
	"loom usage statusline":   by(rowUsage),
	"loom usage insights":     by(rowUsage),
	"loom session archive":    by(rowShown), // these change the user's store and print ids and titles to the user
	"loom session unarchive":  by(rowShown),
	"loom session delete":     by(rowShown),
	"loom session restore":    by(rowShown),
	"loom session prune":      by(rowShown),
	"loom session fork":       by(rowShown),
	"loom session move":       by(rowShown),
	"loom session rename":     by(rowShown),
	"loom session rewind":     by(rowShown),
	"loom session":            quiet("prints its help"),
	"loom log":                quiet("prints its help"),
	"loom doctor":             by(rowShown), // titles of the user's own sessions, to the user
	"loom capture":            quiet("prints its help"),
	"loom capture install":    quiet("writes the capture service's file and loom's import hooks into agents' settings"),
	"loom capture uninstall":  quiet("removes the capture service and the hooks it added"),
	"loom capture status":     quiet("prints whether capture runs, the agents it follows, counts and times"),
	"loom capture run":        quiet("imports the agents' files into the user's own store, and prints counts and the problems' files and lines"),
	"loom hooks":              quiet("says which hooks the agents' settings hold"),
	"loom hooks install":      quiet("writes loom's hooks into agents' settings"),
	"loom hooks uninstall":    quiet("takes loom's hooks out of agents' settings"),
	"loom recall enable":      quiet("marks the project for the recall hooks"),
	"loom recall disable":     quiet("unmarks the project"),
	"loom recall serve":       quiet("prints nothing: answers the recall hooks over its user's socket, redacted as their own recall is (TestWarmRecall, TestHookAsksTheWarmRecall)"),
	"loom paths":              quiet("prints loom's directories, a database URL's password hidden"),
	"loom version":            quiet("prints the version"),
	"loom secrets redact":     quiet("replaces secrets in the store and prints counts"),
	"loom secrets allow":      quiet("keeps value ids and notes on the allow-list"),
	"loom share revoke":       quiet("revokes links by id"),
	"loom sync key":           quiet("prints the sync key, the user's own secret, never stored text"),
	"loom sync status":        quiet("prints hosts and record counts"),
	"loom token":              quiet("prints its help"),
	"loom token create":       quiet("prints a new token"),
	"loom token list":         quiet("prints token ids, users and scopes"),
	"loom token revoke":       quiet("revokes a token"),
	"loom usage prices":       quiet("prints the price table"),
}

// routeWays classifies every route of loom serve.
var routeWays = map[string]class{
	"GET /healthz":                       quiet("says whether the store answers"),
	"GET /api/v1/sessions":               by(rowAPI),
	"GET /api/v1/sessions/{id}":          by(rowAPI),
	"PATCH /api/v1/sessions/{id}":        by(rowAPI),
	"DELETE /api/v1/sessions/{id}":       by(rowAPI),
	"GET /api/v1/sessions/{id}/messages": by(rowAPI),
	"POST /api/v1/sessions/{id}/fork":    by(rowAPI),
	"POST /api/v1/sessions/{id}/rewind":  by(rowAPI),
	"GET /api/v1/sessions/{id}/events":   by(rowAPI),
	"GET /api/v1/events":                 by(rowAPI),
	"GET /api/v1/search":                 by(rowAPI),
	"GET /api/v1/usage":                  by(rowAPI),
	"GET /api/v1/usage/insights":         by(rowAPI),
	"GET /api/v1/blame":                  by(rowAPI), // the owner's files, and ids of their sessions
	"POST /api/v1/messages":              by(rowAgent, rowContinue, rowAPI),
	"GET /api/v1/sync/hosts":             by(rowSync),
	"GET /api/v1/teams/{team}/chain":     quiet("the team's signed chain: public keys, wrapped keys, sealed project names"),
	"POST /api/v1/teams/{team}/chain":    quiet("takes a signed chain entry"),
	"GET /api/v1/teams/{team}/hosts":     quiet("the team's writers and record counts"),
	"GET /api/v1/teams/{team}/records":   by(rowTeam),
	"GET /api/v1/teams/{team}/sums":      quiet("a writer's record indexes and sha256 sums of the sealed bytes, no text"),
	"POST /api/v1/teams/{team}/records":  by(rowTeam),
	"GET /api/v1/sync/records":           by(rowSync),
	"POST /api/v1/sync/records":          by(rowSync),
	"POST /api/v1/shares":                by(rowShareBlob),
	"GET /api/v1/shares":                 quiet("lists the user's share ids and expiries"),
	"DELETE /api/v1/shares/{id}":         quiet("revokes a share"),
	"GET /api/v1/shares/{id}/blob":       by(rowShareBlob),
	"GET /share/{id}":                    by(rowShareBlob),
	"/api/":                              quiet("answers 404 or 405 to what no route takes"),
	"/mcp":                               by(rowMCPHTTP),
	"GET /static/":                       quiet("the dashboard's own files"),
	"GET /static/session.css":            quiet("the dashboard's own style"),
	"GET /login":                         quiet("the login page"),
	"POST /login":                        quiet("logs in"),
	"POST /logout":                       quiet("logs out"),
	"GET /{$}":                           by(rowDashboard),
	"GET /search":                        by(rowDashboard),
	"GET /usage":                         by(rowDashboard),
	"GET /insights":                      by(rowDashboard),
	"GET /blame":                         by(rowDashboard), // the owner's files; titles and prompts through the gate
	"GET /team":                          by(rowDashboard), // loom serve --team: the team's store, titles of sessions the members' gates passed
	"GET /s/{id}":                        by(rowDashboard),
	"GET /s/{id}/m/{seq}":                by(rowDashboard),
	"GET /s/{id}/usage":                  by(rowDashboard),
	"POST /s/{id}/edit":                  by(rowDashboard),
	"POST /s/{id}/fork":                  by(rowDashboard),
	"POST /s/{id}/delete":                by(rowDashboard),
	"POST /s/{id}/archive":               by(rowDashboard),
	"POST /s/{id}/rewind":                by(rowDashboard),
	"GET /s/{id}/export.html":            by(rowDownload),
	"/":                                  quiet("answers 404"),
}

// waysOut is the table.
func waysOut(sec *planted, hub *clitest.ServeProc, hubHome string, syncEnv []string) []wayOut {
	ways := []wayOut{
		// Shown to the user, or kept as the user's own.
		{name: rowShown, inside: "loom session show and list, loom search, loom replay and loom blame show the user's own store to the user, on their terminal (loom secrets redact removes secrets from the store itself)"},
		{name: rowUsage, inside: "tokens, costs and the titles of the user's own sessions, shown to the user (usage statusline: on the user's Claude Code status line)"},
		{name: rowLogs, inside: "the user's own replay logs, shown to the user"},
		{name: rowAPI, inside: "answers only the bearer of one of the user's tokens, with that user's own sessions"},
		{name: rowDashboard, inside: "shown only to a browser holding one of the user's tokens, as its cookie"},
		{name: rowContinue, inside: "continuing a session (loom session resume, loom run -c/--resume, loom chat, POST /api/v1/messages) sends that session's own history to the model the user continues it with: the conversation needs it, as the agent that wrote it had it"},
		{name: rowLossless, inside: "the JSON and JSONL exports are the lossless backup, and say so on stderr", check: checkLossless},
		{name: rowRestoreTo, inside: "puts a session imported from an agent back into that agent's own store, on this machine, as the agent had it: the user's own history to the agent that wrote it, not redacted (docs/durability.md); any other session is refused", check: checkRestoreTo},
		{name: rowSync, inside: "sync sends the hub ciphertext only, sealed with the user's sync key", check: func(t *testing.T, w *world) {
			checkSyncCiphertext(t, w, sec, hubHome, syncEnv)
		}},
		{name: rowShareBlob, inside: "the hub keeps a share's ciphertext only, under a key it never sees (the link's fragment); the page decrypts it in the reader's browser. What the ciphertext holds is checked by the loom share row, which opens it"},
		{name: rowScan, inside: "reports places and counts to the user, never values (at most four characters of each end)", check: func(t *testing.T, w *world) {
			r := w.fx.Run(t, "secrets", "scan", "--full")
			if r.Code != 0 || !strings.Contains(r.Stdout, w.s.ID) {
				t.Fatalf("secrets scan: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			checkNoLeak(t, []sent{sentString("loom secrets scan's output", r.Stdout+r.Stderr)}, sec)
		}},

		// Gated: MCP over stdio, one row per tool.
		{name: "mcp stdio: search_sessions", run: overStdio(searchScript)},
		{name: "mcp stdio: search_sessions by meaning", run: func(t *testing.T, w *world) []sent {
			emb := embeddingtest.New()
			t.Cleanup(emb.Close)
			env := map[string]string{"LOOM_EMBEDDINGS_URL": emb.URL + "/v1", "LOOM_EMBEDDINGS_MODEL": "test-embed"}
			if r := w.fx.RunWith(t, clitest.RunOpts{Env: env}, "embed"); r.Code != 0 {
				t.Fatalf("embed: exit %d: %s", r.Code, r.Stderr)
			}
			m := startMCP(t, w, "LOOM_EMBEDDINGS_URL="+env["LOOM_EMBEDDINGS_URL"], "LOOM_EMBEDDINGS_MODEL=test-embed")
			for _, q := range []string{"the header the smoke test sent to staging", "deploy key", "database url of the shop"} {
				mustTool(t, m.cs, "search_sessions", map[string]any{"query": q, "semantic": true})
				mustTool(t, m.cs, "search_sessions", map[string]any{"query": q})
			}
			return m.finish(t)
		}},
		{name: "mcp stdio: list_sessions", run: overStdio(listScript)},
		{name: "mcp stdio: read_session", run: overStdio(readScript)},
		{name: "mcp stdio: recall", run: overStdio(recallScript)},
		{name: "mcp stdio: usage", run: overStdio(usageScript)},
		{name: "mcp stdio: memory", run: overStdio(memoryScript)},
		{name: "mcp stdio: handoff", run: func(t *testing.T, w *world) []sent {
			home := handoffHome(t)
			m := startMCP(t, w, "HOME="+home)
			for _, to := range handoffTools(t) {
				mustTool(t, m.cs, "handoff", map[string]any{"ref": w.s.ID, "to": to})
				mustTool(t, m.cs, "handoff", map[string]any{"ref": w.s.ID, "to": to, "last": 1})
			}
			return append(m.finish(t), filesUnder(t, home, w.fx.Project)...)
		}},
		{name: "mcp stdio: blame", run: func(t *testing.T, w *world) []sent {
			file := blameRepo(t, w)
			m := startMCP(t, w)
			mustTool(t, m.cs, "blame", map[string]any{"path": file})
			// One line: the conversation that wrote it comes with it.
			if text, isErr := callTool(t, m.cs, "blame", map[string]any{"path": file, "lines": "2"}); isErr || !strings.Contains(text, "The conversation that wrote line 2") {
				t.Fatalf("blame of line 2 gives no conversation (tool error %v): %s", isErr, text)
			}
			// Lines within the body of the key the edit wrote: the
			// key is found in the whole file, not in the lines asked.
			mustTool(t, m.cs, "blame", map[string]any{"path": file, "lines": "9-11"})
			return m.finish(t)
		}},
		// Agent Trace records are meant to be committed: they name
		// sessions, models and line ranges, never what was said.
		{name: rowTrace, want: blameSession, run: func(t *testing.T, w *world) []sent {
			file := blameRepo(t, w)
			o := clitest.RunOpts{Dir: filepath.Dir(file)}
			return append(mustRun(t, w.fx, o, "blame", "trace", "export"), mustRun(t, w.fx, o, "blame", "trace", "export", "--json")...)
		}},
		{name: rowPR, want: blameSession, run: func(t *testing.T, w *world) []sent {
			file := blameRepo(t, w)
			dir := filepath.Dir(file)
			// A base with no history: the pull request is every commit.
			tree := strings.TrimSpace(gittest.Git(t, dir, time.Time{}, "mktree"))
			empty := strings.TrimSpace(gittest.Git(t, dir, time.Time{}, "commit-tree", "-m", "empty", tree))
			gittest.Git(t, dir, time.Time{}, "branch", "empty", empty)
			o := clitest.RunOpts{Dir: dir}
			return slices.Concat(mustRun(t, w.fx, o, "blame", "pr", "empty..HEAD", "--markdown"), mustRun(t, w.fx, o, "blame", "pr", "empty..HEAD", "--json"),
				mustRun(t, w.fx, o, "blame", "pr", "empty..HEAD"))
		}},

		// Gated: MCP over HTTP, at loom serve's /mcp behind its token.
		{name: rowMCPHTTP, run: func(t *testing.T, w *world) []sent {
			sv := clitest.StartServe(t, w.fx, nil, "local")
			var got syncio.Buffer
			client := sdk.NewClient(&sdk.Implementation{Name: "wayout", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: sv.Base + "/mcp",
				HTTPClient: &http.Client{Transport: bodyTap{token: sv.Token, out: &got}}}, nil)
			if err != nil {
				t.Fatalf("connect to /mcp: %v", err)
			}
			for _, script := range []mcpScript{searchScript, readScript, recallScript, listScript, usageScript, memoryScript} {
				script(t, cs, w)
			}
			cs.Close()
			return []sent{sentString("the answers of /mcp", got.String())}
		}},

		// Gated: loom recall, printed and as the agents' hooks.
		{name: rowRecall, run: func(t *testing.T, w *world) []sent {
			var out []sent
			for _, args := range [][]string{
				{"recall", "smoke test Authorization Bearer staging"},
				{"recall", "--json", "smoke test Authorization Bearer staging"},
				{"recall", "--tokens", "8000", "mysql shop private key deploy"},
				{"recall", "--json", "--tokens", "8000", "-a", "deploy key database"},
				{"recall"},
				{"recall", "--json"},
			} {
				out = append(out, mustRun(t, w.fx, clitest.RunOpts{}, args...)...)
			}
			return out
		}},
		{name: rowHookClaude, run: func(t *testing.T, w *world) []sent {
			return hookRun(t, w, "claude-code", "SessionStart", "UserPromptSubmit")
		}},
		{name: rowHookGemini, run: func(t *testing.T, w *world) []sent {
			return hookRun(t, w, "gemini", "SessionStart", "BeforeAgent")
		}},

		// Gated: exports that are made to be passed on.
		{name: rowMarkdown, run: func(t *testing.T, w *world) []sent {
			return append(mustRun(t, w.fx, clitest.RunOpts{}, "session", "export", w.s.ID, "--format", "markdown"),
				mustRun(t, w.fx, clitest.RunOpts{}, "session", "export", "--all", "--format", "markdown")...)
		}},
		{name: rowHTML, run: func(t *testing.T, w *world) []sent {
			return append(mustRun(t, w.fx, clitest.RunOpts{}, "session", "export", w.s.ID, "--format", "html"),
				mustRun(t, w.fx, clitest.RunOpts{}, "session", "export", "--all", "--format", "html")...)
		}},
		{name: rowDownload, run: func(t *testing.T, w *world) []sent {
			sv := clitest.StartServe(t, w.fx, nil, "local")
			req, _ := http.NewRequest("GET", sv.Base+"/s/"+w.s.ID+"/export.html", nil)
			req.Header.Set("Cookie", "loom_token="+sv.Token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Disposition") == "" {
				t.Fatalf("GET /s/%s/export.html: %d %s", w.s.ID, resp.StatusCode, body)
			}
			var head strings.Builder
			resp.Header.Write(&head)
			return []sent{sentString("the download's headers", head.String()), {"the downloaded page", body}}
		}},

		// Gated: a share, through a hub.
		{name: rowShare, run: func(t *testing.T, w *world) []sent {
			return shareRun(t, w, sec, hub, hubHome)
		}},
		{name: rowTeam, run: teamRun},

		// Gated: what goes to models and endpoints.
		{name: rowAgent, run: agentRun},
		{name: rowEmbed, run: func(t *testing.T, w *world) []sent {
			emb := embeddingtest.New()
			t.Cleanup(emb.Close)
			out := mustRun(t, w.fx, clitest.RunOpts{Env: map[string]string{"LOOM_EMBEDDINGS_URL": emb.URL + "/v1", "LOOM_EMBEDDINGS_MODEL": "test-embed"}}, "embed")
			texts := slices.Sorted(maps.Keys(emb.Counts()))
			if len(texts) < 6 {
				t.Fatalf("the embeddings endpoint got %d texts: %q", len(texts), texts)
			}
			for _, x := range texts {
				out = append(out, sentString("a text sent to the embeddings endpoint", x))
			}
			return out
		}},
		{name: rowSummaries, run: summariesRun, want: "wombat"},
	}
	// loom session handoff: one row for each agent it writes for.
	for _, to := range handoffTools(nil) {
		ways = append(ways, wayOut{name: "loom session handoff --to " + to, run: func(t *testing.T, w *world) []sent {
			home := handoffHome(t)
			o := clitest.RunOpts{Env: map[string]string{"HOME": home}, Before: func(f *cli.Factory) { f.Formats = agents.Formats() }}
			out := mustRun(t, w.fx, o, "session", "handoff", w.s.ID, "--to", to)
			out = append(out, mustRun(t, w.fx, o, "session", "handoff", w.s.ID, "--to", to, "--last", "1", "--json")...)
			return append(out, filesUnder(t, home, w.fx.Project)...)
		}})
	}
	return ways
}

// handoffHome is a home where every agent loom hands off to has run
// once: opencode, Kilo, MiMoCode and IcodeMate keep their sessions in a database
// they make on their first run (a copy of one opencode 1.18.33 made),
// which a handoff writes into.
func handoffHome(t *testing.T) string {
	t.Helper()
	db, err := os.ReadFile(filepath.Join("..", "importer", "opencode", "testdata", "real-1.18.33.db"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	for _, app := range []string{"opencode", "kilo", "mimocode", "icodemate"} {
		clitest.MustWrite(t, filepath.Join(home, ".local", "share", app, app+".db"), string(db))
	}
	// NanoCode's is named for its release channel.
	clitest.MustWrite(t, filepath.Join(home, ".local", "share", "nanocode", "opencode-dev.db"), string(db))
	return home
}

// blameSession is the id of the session blameRepo stores.
var blameSession = clitest.IDAt(clitest.Base.Add(20 * time.Minute))

// blameRepo makes a git work tree whose deploy.env an agent wrote, in a
// session (blameSession) whose prompt, reasoning and edit hold planted
// secrets, and commits it; it returns the file's path.
func blameRepo(t *testing.T, w *world) string {
	t.Helper()
	dir := gittest.Init(t)
	file := filepath.Join(dir, "deploy.env")
	content := "APP_ENV=staging\nDATABASE_URL=mysql://app:" + w.p.DBPass + "@db:3306/shop\nMYSQL_PASSWORD=" + w.p.MySQLPass + "\nGITHUB_TOKEN=" + w.p.MemToken + "\n" +
		"DB_PASSWORD=" + w.p.AnglePass + "\n# the deploy key, kept here until the vault takes it\n" + w.p.EditKey + "\n"
	in, err := json.Marshal(map[string]string{"file_path": file, "content": content})
	if err != nil {
		t.Fatal(err)
	}
	at := clitest.Base.Add(20 * time.Minute)
	s := &loom.Session{ID: blameSession, UserID: "local", Key: "cli:blame", Project: clitest.MustProject(t, dir), Cwd: dir, Model: "gpt-4o-mini", Provider: "openai",
		Title: "Put the token " + w.p.MemToken + " in deploy.env"}
	st := w.fx.OpenStore(t)
	defer st.Close()
	if err := st.Append(context.Background(), s,
		clitest.TextMsg(loom.RoleUser, w.p.prompt2, at),
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-4o-mini", Provider: "openai", CreatedAt: at.Add(time.Second), Parts: []loom.Part{
			{Type: loom.PartReasoning, Text: "The bearer token " + w.p.Bearer1 + " and the mysql password go in deploy.env."},
			{Type: loom.PartTool, CallID: "call_write", Name: "Write", Status: loom.ToolCompleted, Input: in, Output: json.RawMessage(`"File created"`)}}},
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-4o-mini", Provider: "openai", CreatedAt: at.Add(2 * time.Second), Parts: []loom.Part{
			{Type: loom.PartText, Text: "deploy.env holds DATABASE_URL=mysql://app:" + w.p.DBPass + "@db:3306/shop now."}}},
	); err != nil {
		t.Fatal(err)
	}
	clitest.MustWrite(t, file, content)
	gittest.Git(t, dir, time.Time{}, "add", "-A")
	gittest.Git(t, dir, time.Time{}, "commit", "-qm", "deploy settings")
	return file
}

// handoffTools are the agents loom hands sessions off to: every format
// that writes one.
func handoffTools(t *testing.T) []string {
	var tools []string
	for _, f := range agents.Formats() {
		if w, ok := f.(handoff.Writer); ok {
			tools = append(tools, w.Tool())
		}
	}
	if len(tools) < 3 && t != nil {
		t.Fatalf("loom hands off to %q only", tools)
	}
	return tools
}

// planted are the secrets of the session every way out is taken on, new
// for each run so that a value found in what went out leaked from it.
type planted struct {
	TitleKey         string // sk-proj-…: the first prompt's, cut in the title
	Bearer1, APIKey1 string // in a prompt, beside the words searched
	Bearer2, APIKey2 string // in a tool's output (curl -v), beside them too
	DBPass           string // of a DATABASE_URL, with & < >, in JSON as \u0026…
	MySQLPass        string // in a tool's input
	PEMTool          string // a PEM private key in a tool's output
	PEMPrompt        string // and one in a prompt
	MemToken         string // in MEMORY.md
	AnglePass        string // a password holding <…>, in a prompt
	EditKey          string // a PEM private key an agent's edit wrote into a file (blameRepo)

	prompt1, prompt2, prompt3 string
	pad                       string // what the tool output holds before PEMTool
}

const (
	alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64   = alnum + "+/"
)

func newPlanted(t *testing.T) *planted {
	seed := rand.Uint64()
	t.Logf("the planted secrets are made from seed %d", seed)
	g := secretstest.New(seed)
	pem := func(kind string) string {
		var b strings.Builder
		b.WriteString("-----BEGIN " + kind + "-----\n")
		for range 8 {
			b.WriteString(g.S(b64, 64) + "\n")
		}
		b.WriteString(g.S(b64, 42) + "==\n-----END " + kind + "-----")
		return b.String()
	}
	p := &planted{
		TitleKey: "sk-proj-" + g.S(alnum+"-_", 64),
		Bearer1:  g.S(alnum, 40), APIKey1: g.S(alnum, 32),
		Bearer2: g.S(alnum, 40), APIKey2: g.S(alnum, 32),
		DBPass:    "pa&ss<9>x2Q" + g.S(alnum, 10),
		MySQLPass: g.S(alnum, 16),
		PEMTool:   pem("RSA PRIVATE KEY"),
		PEMPrompt: pem("PRIVATE KEY"),
		MemToken:  "ghp_" + g.S(alnum, 36),
		AnglePass: g.S(alnum, 3) + "<" + g.S("abcdefghijklmnopqrstuvwxyz", 1) + ">" + g.S(alnum, 10),
		EditKey:   pem("EC PRIVATE KEY"),
	}
	p.prompt1 = "deploy with " + p.TitleKey + " then run the smoke test against staging"
	p.prompt2 = "the smoke test still fails: curl -H 'Authorization: Bearer " + p.Bearer1 + "' -H 'X-Api-Key: " + p.APIKey1 +
		"' https://staging.example.com/health answers 401. Check the mysql shop database too, its DB_PASSWORD=" + p.AnglePass + " is in the vault"
	p.prompt3 = "use this deploy key instead:\n" + p.PEMPrompt + "\nthen deploy to staging again"
	var pad strings.Builder
	for i := 1; pad.Len() < 1900; i++ {
		fmt.Fprintf(&pad, "deploy: step %02d done, artefacts synced to staging\n", i)
	}
	p.pad = pad.String()

	title := loom.TitleFrom(p.prompt1)
	half := p.TitleKey[:len(p.TitleKey)/2]
	if !strings.Contains(title, half) || strings.Contains(title, p.TitleKey) || !strings.HasSuffix(title, "…") {
		t.Fatalf("the title %q is not cut in the middle of the key %q", title, p.TitleKey)
	}
	return p
}

// searchable are secrets as a client that knows them would search
// for them.
func (p *planted) searchable() []string {
	return []string{p.Bearer1, p.APIKey2, p.MySQLPass, p.TitleKey, p.MemToken, strings.Split(p.PEMTool, "\n")[2]}
}

// needle is what, found in what went out, shows that a secret leaked.
type needle struct{ secret, kind, text string }

// needles: each secret, its first and last halves (8 characters or
// more), and each line of a PEM body (and its halves).
func (p *planted) needles() []needle {
	var ns []needle
	add := func(name, v string) {
		ns = append(ns, needle{name, "whole", v})
		if h := len(v) / 2; h >= 8 {
			ns = append(ns, needle{name, "first half", v[:h]}, needle{name, "last half", v[h:]})
		}
	}
	for _, s := range []struct{ name, v string }{
		{"the key in the first prompt and the title", p.TitleKey},
		{"the bearer token in a prompt", p.Bearer1}, {"the X-Api-Key in a prompt", p.APIKey1},
		{"the bearer token in a tool output", p.Bearer2}, {"the X-Api-Key in a tool output", p.APIKey2},
		{"the DATABASE_URL's password", p.DBPass}, {"the mysql -p password in a tool input", p.MySQLPass},
		{"the GitHub token in MEMORY.md", p.MemToken},
		{"the password with <…> in a prompt", p.AnglePass},
	} {
		add(s.name, s.v)
	}
	for _, s := range []struct{ name, v string }{{"the PEM key in a tool output", p.PEMTool}, {"the PEM key in a prompt", p.PEMPrompt}, {"the PEM key an edit wrote", p.EditKey}} {
		for i, line := range strings.Split(s.v, "\n") {
			if strings.HasPrefix(line, "-----") {
				continue
			}
			add(fmt.Sprintf("%s (line %d)", s.name, i), line)
		}
	}
	return ns
}

// world is a store holding the planted session, and the loom home
// around it.
type world struct {
	p      *planted
	fx     *clitest.Fixture
	s      *loom.Session // the planted session, as stored
	clean  *loom.Session // a session without secrets
	pemSeq int64         // the message whose tool output holds PEMTool
	// echoes are secrets a client sent as queries: the answer may say
	// what it looked for (N messages matching "QUERY"), which is no leak.
	echoes []string
}

// plant makes a new loom home whose store holds the planted session (and
// a session without secrets), whose MEMORY.md holds a secret, and whose
// config.toml offers the MCP handoff tool.
func plant(t *testing.T, p *planted) *world {
	t.Helper()
	fx := clitest.NewEmptyFixture(t)
	clitest.WriteConfig(t, fx, "[mcp]\nhandoff = true\n")
	if err := os.MkdirAll(filepath.Join(fx.Home, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	mem := "# Notes\n\n- the staging deploy reads GITHUB_TOKEN=" + p.MemToken + "\n- smoke tests run against staging after each deploy\n"
	if err := os.WriteFile(filepath.Join(fx.Home, "data", "MEMORY.md"), []byte(mem), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := fx.OpenStore(t)
	defer st.Close()
	at := func(min int) time.Time { return clitest.Base.Add(time.Duration(min) * time.Minute) }
	str := func(s string) json.RawMessage {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	use := loom.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0125, APICalls: 1}
	tool := func(id, name, input string, output json.RawMessage) loom.Part {
		return loom.Part{Type: loom.PartTool, CallID: id, Name: name, Status: loom.ToolCompleted, Input: json.RawMessage(input), Output: output}
	}
	text := func(s string) loom.Part { return loom.Part{Type: loom.PartText, Text: s} }
	reply := func(min int, parts ...loom.Part) *loom.Message {
		return &loom.Message{Role: loom.RoleAssistant, Model: "gpt-4o-mini", Provider: "openai", CreatedAt: at(min), Usage: use, Parts: parts}
	}
	curl := "> GET /health HTTP/1.1\n> Host: staging.example.com\n> Authorization: Bearer " + p.Bearer2 + "\n> X-Api-Key: " + p.APIKey2 +
		"\n> Accept: */*\n>\n< HTTP/1.1 401 Unauthorized\n< Content-Type: application/json\n{\"error\":\"the smoke test's token was refused\"}\n"
	env := "APP_ENV=staging\nDATABASE_URL=mysql://app:" + p.DBPass + "@db:3306/shop\nLOG_LEVEL=debug\n"
	keyed := reply(3,
		tool("call_env", "bash", `{"command": "cat .env"}`, str(env)),
		tool("call_key", "read_file", `{"path": "deploy/id_rsa"}`, str(p.pad+p.PEMTool+"\n")),
		text("The deploy key and the database URL are in place."))
	s := &loom.Session{ID: clitest.IDAt(at(0)), UserID: "local", Key: "cli:wayout", Project: fx.Proj, Cwd: fx.Project, Model: "gpt-4o-mini", Provider: "openai"}
	if err := st.Append(ctx, s,
		clitest.TextMsg(loom.RoleUser, p.prompt1, at(0)),
		reply(1,
			text("Connecting to the shop database first."),
			tool("call_mysql", "bash", `{"command": "mysql -u root -p'`+p.MySQLPass+`' shop"}`, str("ERROR 2003 (HY000): Can't connect to MySQL server on 'db:3306' (111)")),
			tool("call_curl", "bash", `{"command": "curl -v https://staging.example.com/health"}`, str(curl)),
			text("The smoke test's request was refused with 401.")),
		clitest.TextMsg(loom.RoleUser, p.prompt2, at(2)),
		keyed,
		clitest.TextMsg(loom.RoleUser, p.prompt3, at(4)),
		reply(5, text("Deployed to staging with the new key; the smoke test passes.")),
	); err != nil {
		t.Fatal(err)
	}
	clean := &loom.Session{ID: clitest.IDAt(at(10)), UserID: "local", Key: "cli:clean", Project: fx.Proj, Cwd: fx.Project}
	if err := st.Append(ctx, clean,
		clitest.TextMsg(loom.RoleUser, "why does the wombat cache miss after a deploy?", at(10)),
		reply(11, text("The wombat cache key ignores the locale; I added it to the key."))); err != nil {
		t.Fatal(err)
	}
	w := &world{p: p, fx: fx}
	var err error
	if w.s, err = st.Session(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if w.clean, err = st.Session(ctx, clean.ID); err != nil {
		t.Fatal(err)
	}
	if w.s.Title != loom.TitleFrom(p.prompt1) {
		t.Fatalf("the stored title %q is not the one loom makes of the first prompt, %q", w.s.Title, loom.TitleFrom(p.prompt1))
	}
	msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		for _, pt := range m.Parts {
			if pt.CallID == "call_key" {
				w.pemSeq = m.Seq
			}
		}
	}
	if w.pemSeq == 0 {
		t.Fatal("the tool output with the PEM key was not stored")
	}
	return w
}

// mustRun runs loom in process and returns its output, failing the test
// unless it exits 0.
func mustRun(t *testing.T, fx *clitest.Fixture, o clitest.RunOpts, args ...string) []sent {
	t.Helper()
	r := fx.RunWith(t, o, args...)
	if r.Code != 0 {
		t.Fatalf("loom %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	what := "loom " + strings.Join(args, " ")
	return []sent{sentString(what+": stdout", r.Stdout), sentString(what+": stderr", r.Stderr)}
}

// filesUnder returns every file under dirs.
func filesUnder(t *testing.T, dirs ...string) []sent {
	t.Helper()
	var out []sent
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			out = append(out, sent{"the file " + path, b})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// mcpProc is loom mcp run as an agent runs it, every byte of its
// standard output and error kept.
type mcpProc struct {
	cs          *sdk.ClientSession
	cmd         *exec.Cmd
	out, errOut syncio.Buffer
}

type readCloser struct {
	io.Reader
	io.Closer
}

func startMCP(t *testing.T, w *world, env ...string) *mcpProc {
	t.Helper()
	m := &mcpProc{cmd: exec.Command(clitest.LoomBinary(t), "mcp")}
	m.cmd.Dir = w.fx.Project
	m.cmd.Env = w.fx.BinEnv(env...)
	m.cmd.Stderr = &m.errOut
	stdin, err := m.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.cmd.Process.Kill()
		m.cmd.Wait()
	})
	client := sdk.NewClient(&sdk.Implementation{Name: "wayout", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if m.cs, err = client.Connect(ctx, &sdk.IOTransport{Reader: readCloser{io.TeeReader(stdout, &m.out), stdout}, Writer: stdin}, nil); err != nil {
		t.Fatalf("connect to loom mcp: %v\n%s", err, m.errOut.String())
	}
	return m
}

// finish ends the session and waits for loom mcp to exit; it returns
// everything loom mcp wrote.
func (m *mcpProc) finish(t *testing.T) []sent {
	t.Helper()
	m.cs.Close()
	m.cmd.Wait()
	return []sent{sentString("loom mcp's standard output", m.out.String()), sentString("loom mcp's standard error", m.errOut.String())}
}

// mustTool calls a tool; a tool error fails the test.
func mustTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) {
	t.Helper()
	if text, isErr := callTool(t, cs, name, args); isErr {
		t.Fatalf("%s(%v) is a tool error: %s", name, args, text)
	}
}

// errTool calls a tool that must answer with a tool error (whose text
// goes to the model too).
func errTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) {
	t.Helper()
	if text, isErr := callTool(t, cs, name, args); !isErr {
		t.Fatalf("%s(%v) is no tool error: %s", name, args, text)
	}
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// The calls each MCP tool's row makes.

// mcpScript is the calls of one MCP tool's row, made over either
// transport.
type mcpScript func(t *testing.T, cs *sdk.ClientSession, w *world)

// overStdio is the run of a row that makes script's calls to loom mcp
// over stdio.
func overStdio(script mcpScript) func(*testing.T, *world) []sent {
	return func(t *testing.T, w *world) []sent {
		m := startMCP(t, w)
		script(t, m.cs, w)
		return m.finish(t)
	}
}

func searchScript(t *testing.T, cs *sdk.ClientSession, w *world) {
	t.Helper()
	for _, q := range []string{"Authorization Bearer", "X-Api-Key staging", "BEGIN PRIVATE KEY", "mysql shop", "deploy", "smoke test", "DATABASE_URL"} {
		mustTool(t, cs, "search_sessions", map[string]any{"query": q})
		mustTool(t, cs, "search_sessions", map[string]any{"query": q, "all_projects": true, "limit": 100})
	}
	// A client that knows a secret may search for it: the answer quotes
	// the query back, and must show nothing else of it.
	for _, q := range w.p.searchable() {
		w.echoes = append(w.echoes, q)
		mustTool(t, cs, "search_sessions", map[string]any{"query": q, "all_projects": true})
	}
	mustTool(t, cs, "search_sessions", map[string]any{"query": "Authorization Bearer", "role": "user", "exact": true})
	mustTool(t, cs, "search_sessions", map[string]any{"query": "Bearer", "role": "assistant"})
	mustTool(t, cs, "search_sessions", map[string]any{"query": "mysql", "role": "assistant", "keyword": true})
}

func listScript(t *testing.T, cs *sdk.ClientSession, _ *world) {
	t.Helper()
	mustTool(t, cs, "list_sessions", map[string]any{})
	mustTool(t, cs, "list_sessions", map[string]any{"all_projects": true, "limit": 200})
	mustTool(t, cs, "list_sessions", map[string]any{"query": "deploy"})
}

func readScript(t *testing.T, cs *sdk.ClientSession, w *world) {
	t.Helper()
	id := w.s.ID
	mustTool(t, cs, "read_session", map[string]any{"ref": id})
	mustTool(t, cs, "read_session", map[string]any{"ref": id[:8]})
	mustTool(t, cs, "read_session", map[string]any{"ref": w.s.Key})
	mustTool(t, cs, "read_session", map[string]any{"ref": id, "limit": 2})
	mustTool(t, cs, "read_session", map[string]any{"ref": id, "limit": 1, "before_seq": w.pemSeq})
	for turn := 1; turn <= 3; turn++ {
		mustTool(t, cs, "read_session", map[string]any{"ref": id, "turn": turn})
	}
	mustTool(t, cs, "read_session", map[string]any{"ref": id, "turn": 2, "limit": 1, "after_seq": 1})
	// One message, read on from offsets that, in the text as stored,
	// fall before, at and inside the PEM key (the tool output holds pad,
	// then the key): what is read from them is cut from redacted text.
	pad := len(w.p.pad)
	for _, off := range []int{0, 1000, pad - 20, pad, pad + 40, pad + 200, pad + 500} {
		mustTool(t, cs, "read_session", map[string]any{"ref": id, "seq": w.pemSeq, "offset": off})
	}
	for seq := int64(1); seq <= 6; seq++ {
		mustTool(t, cs, "read_session", map[string]any{"ref": id, "seq": seq})
		mustTool(t, cs, "read_session", map[string]any{"ref": id, "seq": seq, "offset": 60})
	}
	// A reference two sessions answer to: the error names both, by
	// their titles.
	common := 0
	for common < len(id) && id[common] == w.clean.ID[common] {
		common++
	}
	if common < 4 {
		t.Fatalf("the planted sessions' ids %s and %s share no prefix of 4", id, w.clean.ID)
	}
	errTool(t, cs, "read_session", map[string]any{"ref": id[:common]})
	errTool(t, cs, "read_session", map[string]any{"ref": id, "turn": 9})
}

func recallScript(t *testing.T, cs *sdk.ClientSession, _ *world) {
	t.Helper()
	mustTool(t, cs, "recall", map[string]any{})
	mustTool(t, cs, "recall", map[string]any{"prompt": "smoke test Authorization Bearer staging"})
	mustTool(t, cs, "recall", map[string]any{"prompt": "mysql shop private key deploy", "tokens": 8000})
	mustTool(t, cs, "recall", map[string]any{"prompt": "deploy key database", "tokens": 200, "all_projects": true})
}

func usageScript(t *testing.T, cs *sdk.ClientSession, _ *world) {
	t.Helper()
	mustTool(t, cs, "usage", map[string]any{"by": "session"})
	mustTool(t, cs, "usage", map[string]any{"by": "session", "all_projects": true, "breakdown": "model"})
}

func memoryScript(t *testing.T, cs *sdk.ClientSession, _ *world) {
	t.Helper()
	mustTool(t, cs, "memory", map[string]any{"action": "read"})
	mustTool(t, cs, "memory", map[string]any{"action": "read", "file": "memory"})
}

// bodyTap sends requests with a bearer token and copies every response
// body into out.
type bodyTap struct {
	token string
	out   *syncio.Buffer
}

func (b bodyTap) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if resp != nil {
		resp.Body = readCloser{io.TeeReader(resp.Body, b.out), resp.Body}
	}
	return resp, err
}

// hookRun answers an agent's recall hooks (after loom recall enable) and
// returns what they printed.
func hookRun(t *testing.T, w *world, agent string, events ...string) []sent {
	t.Helper()
	mustRun(t, w.fx, clitest.RunOpts{}, "recall", "enable")
	o := clitest.RunOpts{Env: map[string]string{"LOOM_RECALL_HOOK_TIME": "1m"}}
	var out []sent
	for _, ev := range events {
		for _, prompt := range []string{"", "smoke test Authorization Bearer staging", "mysql shop private key deploy"} {
			in, _ := json.Marshal(map[string]string{"session_id": "x", "cwd": w.fx.Project, "hook_event_name": ev, "prompt": prompt})
			o.Stdin = string(in)
			// A hook that runs out of its search's time says nothing
			// rather than something wrong; on a loaded machine it is
			// asked again, as what is checked is what it adds.
			got := mustRun(t, w.fx, o, "recall", "--hook", agent)
			for try := 1; len(got[0].data) == 0 && try < 5; try++ {
				got = mustRun(t, w.fx, o, "recall", "--hook", agent)
			}
			if len(got[0].data) == 0 {
				t.Errorf("the %s hook %s with prompt %q added nothing in 5 tries", agent, ev, prompt)
			}
			out = append(out, got...)
		}
	}
	return out
}

// shareRun shares the planted session through the hub: the preview,
// the link, the page and the sealed payload opened with the link's key,
// and loom share list.
func shareRun(t *testing.T, w *world, sec *planted, hub *clitest.ServeProc, hubHome string) []sent {
	t.Helper()
	// The hub keeps real time: so must the link's expiry.
	o := clitest.RunOpts{Env: map[string]string{"LOOM_SHARE_HUB": hub.Base, "LOOM_SHARE_TOKEN": hub.Token},
		Before: func(f *cli.Factory) { f.Now = time.Now }}
	r := w.fx.RunWith(t, o, "share", w.s.ID)
	if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "Secrets: redacted") {
		t.Fatalf("share without --yes off a terminal: exit %d\n%s", r.Code, r.Stderr)
	}
	out := []sent{sentString("loom share's preview", r.Stdout+r.Stderr)}
	out = append(out, mustRun(t, w.fx, o, "share", w.s.ID, "--yes")...)
	jsonOut := mustRun(t, w.fx, o, "share", w.s.ID, "--yes", "--json", "--turns", "2-3")
	out = append(out, jsonOut...)
	links := []string{strings.TrimSpace(string(out[1].data))}
	var res struct {
		Link string `json:"link"`
	}
	if err := json.Unmarshal(jsonOut[0].data, &res); err != nil {
		t.Fatalf("share --json: %v\n%s", err, jsonOut[0].data)
	}
	links = append(links, res.Link)
	for _, link := range links {
		i := strings.Index(link, "#k=")
		id, ok := strings.CutPrefix(link[:max(i, 0)], hub.Base+share.PagePath)
		if i < 0 || !ok {
			t.Fatalf("share printed the link %q", link)
		}
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		blob, err := (&share.Client{URL: hub.Base}).Blob(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		p, err := share.Open(blob, link[i+3:])
		if err != nil {
			t.Fatalf("open the share %s: %v", id, err)
		}
		payload, _ := json.Marshal(p)
		out = append(out, sent{"the share page " + id, page}, sent{"the share " + id + " opened with its key", payload})
	}
	out = append(out, mustRun(t, w.fx, o, "share", "list")...)
	out = append(out, mustRun(t, w.fx, o, "share", "list", "--json")...)
	clitest.HubHoldsNo(t, hubHome, "", needleTexts(sec)...)
	return out
}

func needleTexts(p *planted) []string {
	var out []string
	for _, n := range p.needles() {
		out = append(out, n.text)
	}
	return out
}

// agentRun runs loom's own agent against a fake model scripted to search
// the sessions right beside the secrets and to read its memory, and
// returns every request the model received.
func agentRun(t *testing.T, w *world) []sent {
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	call := func(id, name, args string) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: name, Args: args}}}
	}
	srv.Enqueue(
		call("call_1", "session_search", `{"query": "Authorization Bearer"}`),
		call("call_2", "session_search", `{"query": "BEGIN PRIVATE KEY", "limit": 50}`),
		call("call_3", "session_search", `{"query": "mysql shop"}`),
		call("call_4", "session_search", `{"query": "deploy"}`),
		call("call_5", "memory", `{"action": "read", "file": "memory"}`),
		openaitest.Reply{Text: "The smoke test sent a bearer token and an API key."},
	)
	o := clitest.RunOpts{Env: map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini"},
		Before: func(f *cli.Factory) { f.Providers = clitest.TestProviders() }}
	mustRun(t, w.fx, o, "run", "what did the smoke test send to staging?")
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("the model got %d requests, want 6", len(reqs))
	}
	var out []sent
	for i, r := range reqs {
		out = append(out, sent{fmt.Sprintf("request %d to the model", i+1), r.Raw})
	}
	return out
}

// summariesRun summarises every session, then the planted one by name,
// and returns every request the model received: the planted session is
// skipped, never sent; the one without secrets is summarised.
func summariesRun(t *testing.T, w *world) []sent {
	srv, env := clitest.SummaryModel(t)
	srv.Enqueue(openaitest.Reply{Text: "A wombat cache fix."})
	all := w.fx.Summarize(t, env, "--all")
	one := w.fx.Summarize(t, env, w.s.ID)
	for _, res := range append(all, one...) {
		switch res.SessionID {
		case w.s.ID:
			if res.Skipped != summarize.SkipSecret && res.Skipped != summarize.SkipRedacted {
				t.Errorf("the planted session was not skipped for its secrets: %+v", res)
			}
		case w.clean.ID:
			if res.Summary == "" && res.Skipped != summarize.SkipDescribed {
				t.Errorf("the session without secrets was not summarised: %+v", res)
			}
		}
	}
	var out []sent
	for i, r := range srv.Requests() {
		out = append(out, sent{fmt.Sprintf("request %d to the summaries' model", i+1), r.Raw})
	}
	return out
}

// checkLossless: the JSON and JSONL exports keep the secrets, and say so.
func checkLossless(t *testing.T, w *world) {
	for _, f := range []string{"json", "jsonl"} {
		r := w.fx.Run(t, "session", "export", w.s.ID, "--format", f)
		if r.Code != 0 || !strings.Contains(r.Stderr, "lossless backup") || !strings.Contains(r.Stdout, w.s.ID) {
			t.Errorf("export --format %s: exit %d; stderr %q does not say it is the lossless backup", f, r.Code, r.Stderr)
		}
	}
}

// checkRestoreTo: restore-to takes back only a session imported from
// the agent named; loom's own planted session is refused, and no file
// is written (continuing it in an agent is the hand-off, which is gated).
func checkRestoreTo(t *testing.T, w *world) {
	names := func() []string {
		var out []string
		for _, f := range filesUnder(t, w.fx.Home) {
			if !strings.Contains(f.what, "sessions.db") {
				out = append(out, f.what)
			}
		}
		return out
	}
	before := names()
	for _, agent := range []string{"claude-code", "codex", "gemini"} {
		r := w.fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "restore-to", agent, w.s.ID)
		if r.Code != 2 || !strings.Contains(r.Stderr, "is not a session of "+agent) {
			t.Errorf("restore-to %s of loom's own session: exit %d: %s", agent, r.Code, r.Stderr)
		}
	}
	if after := names(); !slices.Equal(before, after) {
		t.Errorf("restore-to wrote files: before %v, after %v", before, after)
	}
}

// checkSyncCiphertext: a sync sends the hub the planted session, and the
// hub's files hold none of its secrets.
func checkSyncCiphertext(t *testing.T, w *world, sec *planted, hubHome string, syncEnv []string) {
	// Sync keeps SQLite stores in step; a PostgreSQL store is shared by
	// its machines already and does not sync.
	clitest.SkipOnPostgres(t, "a PostgreSQL store does not sync")
	env := map[string]string{}
	for _, kv := range syncEnv {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	o := clitest.RunOpts{Env: env}
	mustRun(t, w.fx, o, "sync", "key")
	r := w.fx.RunWith(t, o, "sync")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Sent ") {
		t.Fatalf("sync: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	clitest.HubHoldsNo(t, hubHome, "", needleTexts(sec)...)
}

// checkSent fails for every planted value found in what went out, and
// when what went out shows no sign of the planted session.
func checkSent(t *testing.T, out []sent, w *world, want string) {
	t.Helper()
	if len(out) == 0 {
		t.Fatal("nothing went out")
	}
	checkNoLeak(t, out, w.p, w.echoes...)
	if want == "" {
		want = "[REDACTED:"
	}
	for _, s := range out {
		for _, v := range views(s.data) {
			if strings.Contains(v.text, want) {
				return
			}
		}
	}
	t.Errorf("nothing that went out holds %q: the way out was not taken on the planted session", want)
}

func checkNoLeak(t *testing.T, out []sent, p *planted, echoes ...string) {
	t.Helper()
	ns := p.needles()
	for _, s := range out {
		reported := map[string]bool{}
		for _, v := range views(s.data) {
			for _, e := range echoes {
				// search_sessions says what it looked for: `N messages
				// matching "QUERY"`, `No messages match "QUERY"`.
				for _, say := range []string{"matching ", "match "} {
					v.text = strings.ReplaceAll(v.text, say+`\"`+e+`\"`, say+`"…"`)
					v.text = strings.ReplaceAll(v.text, say+`"`+e+`"`, say+`"…"`)
				}
			}
			for _, n := range ns {
				i := strings.Index(v.text, n.text)
				if i < 0 || reported[n.secret] {
					continue
				}
				reported[n.secret] = true
				from, to := max(0, i-80), min(len(v.text), i+len(n.text)+80)
				t.Errorf("LEAK: %s holds %s (%s, %s):\n…%s…", s.what, n.secret, n.kind, v.name, v.text[from:to])
			}
		}
	}
}

type view struct{ name, text string }

// views are the ways to read what went out: as sent, and with the JSON,
// HTML and URL escapes that may hide a value undone.
func views(b []byte) []view {
	raw := string(b)
	j := unescapeJSON(raw)
	out := []view{{"as sent", raw}, {"JSON escapes undone", j}, {"JSON escapes undone twice", unescapeJSON(j)},
		{"HTML escapes undone", html.UnescapeString(raw)}, {"JSON then HTML escapes undone", html.UnescapeString(j)},
		{"HTML then JSON escapes undone", unescapeJSON(html.UnescapeString(raw))}, {"URL escapes undone", unescapePercent(raw)}}
	return out
}

// unescapeJSON undoes the escapes of JSON strings wherever they are.
func unescapeJSON(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\', '/':
			b.WriteByte(c)
		case 'u':
			if i+6 <= len(s) {
				if r, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 5
					continue
				}
			}
			b.WriteByte('\\')
			continue
		default:
			b.WriteByte('\\')
			continue
		}
		i++
	}
	return b.String()
}

func unescapePercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// teamRun shares the planted session's project with a team on a hub on
// PostgreSQL and syncs, and returns what a teammate opens: every record's
// payload on the hub, opened with the team's keys, the chain, and the
// files of the team's store that the sync wrote here.
func teamRun(t *testing.T, w *world) []sent {
	t.Helper()
	hub, _, _ := clitest.StartHub(t, clitest.FreshSchema(t))
	o := clitest.RunOpts{Env: map[string]string{"LOOM_SYNC_HUB": hub.Base, "LOOM_SYNC_TOKEN": hub.Token}, Before: func(f *cli.Factory) { f.Now = time.Now }}
	out := mustRun(t, w.fx, o, "team", "create", "core")
	r := w.fx.RunWith(t, o, "team", "share", "--content")
	if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "secrets redacted") {
		t.Fatalf("team share without --yes off a terminal: exit %d\n%s", r.Code, r.Stderr)
	}
	out = append(out, sentString("loom team share's preview", r.Stdout+r.Stderr))
	out = append(out, mustRun(t, w.fx, o, "team", "share", "--content", "--yes")...)
	out = append(out, mustRun(t, w.fx, o, "team", "sync")...)
	local := teamrun.Local{Dir: filepath.Join(w.fx.Home, "data", "teams")}
	st, err := local.Find("core")
	if err != nil {
		t.Fatal(err)
	}
	c := &hubpkg.Client{URL: hub.Base, Token: hub.Token}
	ctx := context.Background()
	chain, err := c.TeamChain(ctx, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	v, err := team.Verify(st.ID, st.Admin, chain)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range chain {
		out = append(out, sent{"a chain entry", e})
	}
	hosts, err := c.Team(st.ID).Hosts(ctx)
	if err != nil || len(hosts) == 0 {
		t.Fatalf("the team's writers on the hub: %v %v", hosts, err)
	}
	for _, h := range hosts {
		recs, _, err := c.Team(st.ID).Records(ctx, h.Host, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			_, payload, err := team.OpenRecord(v, st.Keys, team.RecordOf(rec))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, sent{"a team record's payload, as a teammate opens it", payload})
		}
	}
	return append(out, filesUnder(t, filepath.Join(local.Dir, st.ID))...)
}
