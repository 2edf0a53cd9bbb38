package team

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

// machine is a machine's teams kept in a directory of its own, as the
// commands read them, with no hub to reach: what the commands do before
// or without one.
type machine struct {
	local teamrun.Local
	cfg   *config.Config
}

func newMachine(t *testing.T, teams ...*teamrun.State) *machine {
	t.Helper()
	m := &machine{local: teamrun.Local{Dir: filepath.Join(t.TempDir(), "teams")}, cfg: &config.Config{}}
	for _, s := range teams {
		if err := m.local.Save(s); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// options are the shared options on m, on streams of buffers (a
// terminal's when tty).
func (m *machine) options(tty bool) *Options {
	ios, _, _, _ := term.Test()
	ios.SetStdinTTY(tty)
	ios.SetStdoutTTY(tty)
	return &Options{
		IO:       ios,
		Teams:    func() (teamrun.Local, error) { return m.local, nil },
		FindTeam: func(ref string) (*teamrun.State, error) { return m.local.Find(ref) },
		Config:   func() (*config.Config, string, error) { return m.cfg, "config.toml", nil },
		Now:      func() time.Time { return time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC) },
	}
}

func (m *machine) state(t *testing.T, id string) *teamrun.State {
	t.Helper()
	s, err := m.local.Find(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// list prints a line a team (a machine of a member's says so, a team
// left says "left"), --json a row each, and on a machine in no team
// says so on stderr alone.
func TestListRun(t *testing.T) {
	t.Parallel()
	m := newMachine(t,
		&teamrun.State{ID: "0196aaaa0000000100000000000000c1", Name: "core", Hub: "http://hub:8080", Admin: "fp-a", Me: "alice"},
		&teamrun.State{ID: "0196aaaa0000000200000000000000c2", Name: "ops", Hub: "https://hub.example", Admin: "fp-b", Me: "bob", Machine: "laptop", Gone: true})
	opts := m.options(false)
	if err := listRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut := cmdtest.Outputs(opts.IO)
	want := "core         0196aaaa0000000100000000000000c1  http://hub:8080 as alice (member)\n" +
		"ops          0196aaaa0000000200000000000000c2  https://hub.example as bob's machine laptop (left)\n"
	if out != want || errOut != "" {
		t.Errorf("list:\n%s\nwant\n%s(stderr %q)", out, want, errOut)
	}

	opts = m.options(false)
	opts.JSON = true
	if err := listRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ = cmdtest.Outputs(opts.IO)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || rows[1]["machine"] != "laptop" || rows[1]["gone"] != true || rows[0]["hub"] != "http://hub:8080" {
		t.Errorf("list --json: %v %s", err, out)
	}
	if _, ok := rows[0]["machine"]; ok {
		t.Errorf("list --json names a machine for a member's own: %s", out)
	}

	for _, asJSON := range []bool{false, true} {
		opts = newMachine(t).options(false)
		opts.JSON = asJSON
		if err := listRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		out, errOut = cmdtest.Outputs(opts.IO)
		switch {
		case asJSON && (strings.TrimSpace(out) != "[]" || errOut != ""):
			t.Errorf("list --json in no team: %q %q", out, errOut)
		case !asJSON && (out != "" || !strings.Contains(errOut, "This machine is in no team")):
			t.Errorf("list in no team: %q %q", out, errOut)
		}
	}
}

// doctor says the records set aside, a member's first, at most 30 of
// them with a line for the rest; --json lists every one kept with the
// total; with none it says every record was applied.
func TestDoctorRun(t *testing.T) {
	t.Parallel()
	s := &teamrun.State{ID: "0196aaaa0000000100000000000000c1", Name: "core", Seq: 7, Head: "h7", SetAsideTotal: 45}
	for i := range 32 {
		a := teamrun.SetAside{Host: fmt.Sprintf("w%02d", i), Index: int64(i), Why: "does not verify"}
		if i == 31 {
			a.Author = "bob"
		}
		s.SetAside = append(s.SetAside, a)
	}
	m := newMachine(t, s, &teamrun.State{ID: "0196aaaa0000000200000000000000c2", Name: "quiet", Seq: 3, Head: "h3"})

	opts := m.options(false)
	opts.Team = "core"
	if err := doctorRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := cmdtest.Outputs(opts.IO)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2+maxAsideShown+1 || lines[0] != "team core: chain verified to entry 7 (h7)" || lines[1] != "45 records set aside, not applied:" ||
		!strings.Contains(lines[2], "(bob)") || lines[len(lines)-1] != "  … and 15 more (--json lists the first 32)" {
		t.Errorf("doctor: %d lines:\n%s", len(lines), out)
	}

	opts = m.options(false)
	opts.Team, opts.JSON = "core", true
	if err := doctorRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ = cmdtest.Outputs(opts.IO)
	var got struct {
		Team     string
		SetAside []teamrun.SetAside `json:"set_aside"`
		Total    int                `json:"set_aside_total"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Team != "core" || len(got.SetAside) != 32 || got.Total != 45 {
		t.Errorf("doctor --json: %v %+v", err, got)
	}

	opts = m.options(false)
	opts.Team = "quiet"
	if err := doctorRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out, _ := cmdtest.Outputs(opts.IO); out != "team quiet: chain verified to entry 3 (h3)\nno record set aside: every record read was applied\n" {
		t.Errorf("doctor of a team with nothing set aside: %q", out)
	}
	opts = m.options(false)
	opts.Team, opts.JSON = "quiet", true
	if err := doctorRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out, _ := cmdtest.Outputs(opts.IO); !strings.Contains(out, `"set_aside": []`) {
		t.Errorf("doctor --json with nothing set aside lists no empty list: %s", out)
	}
}

// The commands that reach the hub say what is missing before reaching
// it: the team first (a machine in no team is told that, not that it
// has no token), then the token, then a hub that is no http(s) URL; the
// team's state is left as it was.
func TestRunsRefuseBeforeTheHub(t *testing.T) {
	t.Parallel()
	none := newMachine(t)
	for name, run := range map[string]func(*Options) error{
		"members": func(o *Options) error { return membersRun(t.Context(), o) },
		"invite":  func(o *Options) error { return inviteRun(t.Context(), &InviteOptions{Options: o}) },
		"sync":    func(o *Options) error { return syncRun(t.Context(), &SyncOptions{Options: o}) },
		"remove":  func(o *Options) error { return removeRun(t.Context(), &RemoveOptions{Options: o, Member: "bob"}) },
	} {
		if err := run(none.options(false)); loom.ErrorCode(err) != loom.ENOTFOUND || !strings.Contains(err.Error(), "no team") {
			t.Errorf("%s in no team: %v", name, err)
		}
	}

	if err := createRun(t.Context(), &CreateOptions{Options: none.options(false), Name: "core"}); loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(err.Error(), "no token for the hub") {
		t.Errorf("create without a token: %v", err)
	}
	none.cfg.Sync.Token = "loom_cfg"
	if err := createRun(t.Context(), &CreateOptions{Options: none.options(false), Name: "core"}); loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(err.Error(), "no hub") {
		t.Errorf("create without a hub: %v", err)
	}

	s := &teamrun.State{ID: "0196aaaa0000000100000000000000c1", Name: "core", Hub: "http://hub:8080", Token: "loom_team"}
	m := newMachine(t, s)
	opts := m.options(false)
	opts.Hub, opts.Token = "ftp://hub.example", "loom_new"
	if err := setHubRun(t.Context(), opts); loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(err.Error(), `hub "ftp://hub.example" is not an http:// or https:// URL`) {
		t.Errorf("set-hub ftp://: %v", err)
	}
	if got := m.state(t, s.ID); got.Hub != s.Hub || got.Token != s.Token {
		t.Errorf("a refused set-hub changed the team: hub %s, token %s", got.Hub, got.Token)
	}
}

// The first share of a project shows what would be sent (its sessions,
// messages and the secrets the gate redacts) and asks; off a terminal
// it asks for --yes and shares nothing, and on one it shares nothing
// when the answer is no. Unsharing a project not shared is ENOTFOUND.
func TestShareRunPreview(t *testing.T) {
	t.Parallel()
	st := cmdtest.Store(t)
	api := loom.Project{ID: "00000000000000a1", Name: "api", Root: "/src/api"}
	secret := secretstest.New(68).Secret("github-token")
	storetest.AppendTexts(t, st, &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:api", Title: "deploy", Project: api},
		"why does the deploy fail", "I used "+secret.Text)
	storetest.AppendTexts(t, st, &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:api:2", Title: "spike", Project: api},
		"try a spike", "spiked")
	storetest.AppendTexts(t, st, &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:web", Title: "web", Project: loom.Project{ID: "00000000000000b2", Name: "web"}},
		"another project", "not counted")
	storetest.AppendTexts(t, st, &loom.Session{ID: loom.NewID(), UserID: "carol", Key: "cli:api", Title: "carol's", Project: api},
		"another user's", "not counted")

	s := &teamrun.State{ID: "0196aaaa0000000100000000000000c1", Name: "core", Hub: "http://127.0.0.1:1", Token: "loom_team", Shares: map[string]team.Project{}}
	m := newMachine(t, s)
	share := func(tty bool, answer, mode string) (*ShareOptions, error) {
		o := &ShareOptions{Options: m.options(tty), Mode: mode, User: func() string { return "alice" },
			Project:   func(dir string) (loom.Project, error) { return api, nil },
			ReadStore: func(context.Context) (loom.Engine, error) { return st, nil }}
		o.IO.In = strings.NewReader(answer)
		return o, shareRun(t.Context(), o)
	}

	opts, err := share(false, "", team.ModeContent)
	cmdtest.Refused(t, err, "not on a terminal, so not asked")
	_, errOut := cmdtest.Outputs(opts.IO)
	if want := "Sharing project api (/src/api) with team core, content: 2 sessions, 4 messages, 1 secret redacted before sealing.\n"; errOut != want {
		t.Errorf("the preview:\n%q\nwant\n%q", errOut, want)
	}

	opts, err = share(true, "n\n", team.ModeAggregates)
	if code := command.ExitCode(err); code != command.ExitError {
		t.Errorf("share answered no: %v (exit %d)", err, code)
	}
	if _, errOut := cmdtest.Outputs(opts.IO); !strings.Contains(errOut, "Only usage, cost, models, agents and tool counts are sent; no text.") || !strings.HasSuffix(errOut, "Nothing was shared.\n") {
		t.Errorf("share --aggregates answered no:\n%s", errOut)
	}
	if got := m.state(t, s.ID); len(got.Shares) != 0 {
		t.Errorf("a share refused shared %v", got.Shares)
	}

	if _, err := share(false, "", ""); loom.ErrorCode(err) != loom.ENOTFOUND || !strings.Contains(err.Error(), "you do not share project api with team core") {
		t.Errorf("unshare of a project not shared: %v", err)
	}
}
