package usage

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/pricing"
)

// world is a SQLite store with two sessions that used tokens a moment
// ago, api's before web's: one in the project api of a model config.toml prices at $3 and
// $15 a million tokens in and out, one in web of a model with no price.
type world struct {
	st         loom.Engine
	api, web   loom.Project
	apiS, webS *loom.Session
	prices     *pricing.Table
}

func newWorld(t *testing.T) *world {
	t.Helper()
	st := cmdtest.Store(t)
	w := &world{st: st, api: loom.Project{ID: "p-api", Name: "api", Root: "/src/api"}, web: loom.Project{ID: "p-web", Name: "web", Root: "/src/web"},
		prices: &pricing.Table{}}
	w.prices.Add("anthropic", "house-model", pricing.Price{Input: 3, Output: 15})
	w.apiS = &loom.Session{ID: loom.NewID(), UserID: "local", Key: "claude-code:cc-api", Title: "api work", Surface: "claude-code", Project: w.api}
	w.webS = &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:web", Title: "web work", Surface: "cli", Project: w.web}
	now := time.Now()
	w.turn(t, w.apiS, now.Add(-2*time.Second), "anthropic", "house-model", loom.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, APICalls: 1})
	w.turn(t, w.webS, now.Add(-time.Second), "acme", "mystery-model", loom.Usage{InputTokens: 2000, OutputTokens: 300, APICalls: 1})
	return w
}

// turn appends to s a prompt and a reply of model at at that used u.
func (w *world) turn(t *testing.T, s *loom.Session, at time.Time, provider, model string, u loom.Usage) {
	t.Helper()
	msgs := []*loom.Message{
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "do the work"}}, CreatedAt: at},
		{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "done"}}, Provider: provider, Model: model, Usage: u, CreatedAt: at},
	}
	if err := w.st.Append(t.Context(), s, msgs...); err != nil {
		t.Fatal(err)
	}
}

// options are loom usage's options on w, in project api, and its
// streams.
func (w *world) options() (*Options, *term.IOStreams) {
	ios, _, _, _ := term.Test()
	scope := command.Scope{IO: ios, User: func() string { return "local" }, Project: func() (loom.Project, error) { return w.api, nil }}
	o := &Options{
		IO:         ios,
		ReadStore:  func(context.Context) (loom.Engine, error) { return w.st, nil },
		Resolve:    scope.Resolve,
		Project:    scope.Project,
		PriceTable: func() (*pricing.Table, error) { return w.prices, nil },
		RefLen:     scope.RefLen,
		Now:        time.Now,
		User:       "local",
		Agents:     []string{"claude-code", "codex"},
		Limit:      10,
	}
	o.report.order = "asc"
	return o, ios
}

func text(w any) string { return w.(interface{ String() string }).String() }

// rows are the tab-separated lines of out, split.
func rows(out string) [][]string {
	var rs [][]string
	for line := range strings.Lines(out) {
		rs = append(rs, strings.Split(strings.TrimSuffix(line, "\n"), "\t"))
	}
	return rs
}

// The command fills its options from its flags and argument, and
// refuses a report by time of one session.
func TestNewCmdUsageOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, NewCmdUsage, "0196a3b2", "-p", "-L", "3", "--json", "--user", "alice")
	if got.Ref != "0196a3b2" || !got.ThisProject || got.Limit != 3 || !got.JSON || got.User != "alice" || got.report.set() || got.ImportAgents == nil {
		t.Errorf("options: %+v", got)
	}
	got = cmdtest.Options(t, NewCmdUsage, "--by", "week", "--since", "7d", "--breakdown", "model", "--no-import")
	if got.Limit != 10 || got.report.by != "week" || got.report.since != "7d" || got.report.breakdown != "model" || !got.report.noImport || !got.report.set() {
		t.Errorf("a report by time: %+v", got.report)
	}
	for _, bad := range [][]string{
		{"--limit", "-1"},
		{"--compact", "--wide"},
		{"0196a3b2", "--by", "day"},
		{"a", "b"},
	} {
		cmdtest.Rejects(t, NewCmdUsage, bad...)
	}
}

// Usage prints the totals and a line per session, project, surface and
// model, priced by the price table; a cost it cannot know is not $0.
func TestUsageRunTotals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options()
	if err := usageRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	rs := rows(text(ios.Out))
	if want := []string{"total", "", "", "2", "4", "1002000", "100300", "0", "0", "0", "2", "4.5"}; strings.Join(rs[0], "|") != strings.Join(want, "|") {
		t.Errorf("total line %q, want %q", rs[0], want)
	}
	byKey := map[string][]string{}
	for _, r := range rs[1:] {
		byKey[r[0]+" "+r[1]] = r
	}
	if r := byKey["session "+w.apiS.ID]; len(r) != 12 || r[2] != "api work" || r[11] != "4.5" {
		t.Errorf("api's session: %q", r)
	}
	if r := byKey["session "+w.webS.ID]; len(r) != 12 || r[11] != "—" {
		t.Errorf("web's session of an unpriced model: %q, want its cost unknown", r)
	}
	for _, k := range []string{"project p-api", "project p-web", "surface claude-code", "surface cli", "model anthropic:house-model"} {
		if byKey[k] == nil {
			t.Errorf("no line %q in:\n%s", k, text(ios.Out))
		}
	}

	// --project keeps to api; REF to one session; --json says it all.
	opts, ios = w.options()
	opts.ThisProject, opts.JSON = true, true
	if err := usageRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var rep loom.UsageReport
	if err := json.Unmarshal([]byte(text(ios.Out)), &rep); err != nil || len(rep.BySession) != 1 || rep.BySession[0].Key != w.apiS.ID || rep.Total.CostUSD != 4.5 {
		t.Errorf("--project --json: %s (%v)", text(ios.Out), err)
	}
	opts, ios = w.options()
	opts.Ref, opts.JSON = w.webS.ID, true
	if err := usageRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(text(ios.Out)), &rep); err != nil || len(rep.BySession) != 1 || rep.BySession[0].Key != w.webS.ID || rep.Total.InputTokens != 2000 {
		t.Errorf("REF --json: %s (%v)", text(ios.Out), err)
	}
}

// A report first imports what the agents wrote and says so; --no-import
// does not, and an empty report says where no agent history was found.
func TestUsageRunImportsFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	imported := 0
	opts, ios := w.options()
	opts.ImportAgents = func(context.Context) (*importer.Report, error) {
		imported++
		return &importer.Report{Tools: []*importer.ToolReport{{Tool: "claude-code", RootsFound: 1, SessionsNew: 1, MessagesAdded: 2}}}, nil
	}
	if err := usageRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if want := "Imported 1 new or grown session (2 messages) from claude-code first; --no-import skips this.\n"; imported != 1 || text(ios.ErrOut) != want {
		t.Errorf("imported %d times, stderr %q, want %q", imported, text(ios.ErrOut), want)
	}
	opts, ios = w.options()
	opts.ImportAgents = func(context.Context) (*importer.Report, error) { imported++; return &importer.Report{}, nil }
	opts.report.noImport = true
	if err := usageRun(t.Context(), opts); err != nil || imported != 1 {
		t.Errorf("--no-import imported (%d times): %v", imported, err)
	}
	if strings.Contains(text(ios.ErrOut), "Imported") {
		t.Errorf("--no-import still says it imported: %q", text(ios.ErrOut))
	}

	opts, ios = w.options()
	opts.User = "nobody"
	opts.ImportAgents = func(context.Context) (*importer.Report, error) {
		return &importer.Report{Tools: []*importer.ToolReport{{Tool: "codex", Roots: []string{"/h/.codex", "/h/.codex2"}}}}, nil
	}
	if err := usageRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text(ios.ErrOut), "No agent history on this machine: loom looked in 2 places") {
		t.Errorf("an empty report's stderr: %q", text(ios.ErrOut))
	}
}
