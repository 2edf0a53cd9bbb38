package sync

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/syncrun"
)

// startHub starts a hub (loom serve's handler on a SQLite store in a
// temporary directory) and returns its URL and a token of alice's on it.
func startHub(t *testing.T) (hubURL, token string) {
	t.Helper()
	st := cmdtest.Store(t)
	_, token, err := st.CreateScopedToken(t.Context(), "alice", "sync", loom.ScopeFull, 0)
	if err != nil {
		t.Fatal(err)
	}
	return cmdtest.Hub(t, st).URL, token
}

// machine is one of alice's machines: its SQLite store and its LOOM_HOME,
// whose config names the hub.
type machine struct {
	st   *sqlite.Store
	home string
	cfg  *config.Config
}

func newMachine(t *testing.T, hubURL, token string) *machine {
	t.Helper()
	m := &machine{st: cmdtest.Store(t), home: t.TempDir(), cfg: &config.Config{}}
	m.cfg.Sync.Hub, m.cfg.Sync.Token = hubURL, token
	return m
}

// hub are the sync commands' means on m, and their streams.
func (m *machine) hub() (Hub, *term.IOStreams) {
	ios, _, _, _ := term.Test()
	return Hub{
		IO:            ios,
		CreateReplica: func(context.Context) (loom.Engine, syncrun.Store, error) { return m.st, m.st, nil },
		Config:        func() (*config.Config, string, error) { return m.cfg, "config.toml", nil },
		Dirs: func() (paths.Dirs, error) {
			return paths.Resolve(func(k string) string { return map[string]string{"LOOM_HOME": m.home}[k] })
		},
	}, ios
}

func (m *machine) keyOptions(stdin string) (*KeyOptions, *term.IOStreams) {
	h, ios := m.hub()
	ios.In = strings.NewReader(stdin)
	return &KeyOptions{IO: ios, Config: h.Config, Dirs: h.Dirs}, ios
}

// sync runs loom sync on m and returns its stdout.
func (m *machine) sync(t *testing.T) string {
	t.Helper()
	h, ios := m.hub()
	if err := syncRun(t.Context(), &Options{Hub: h, User: "alice"}); err != nil {
		t.Fatalf("sync: %v\n%s", err, text(ios.ErrOut))
	}
	return text(ios.Out)
}

func text(w any) string { return w.(interface{ String() string }).String() }

// The commands fill their options from their flags; --force goes with
// --set only.
func TestNewCmdSyncOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, NewCmdSync, "-w", "--interval", "30s", "--json", "--user", "bob"); !got.Watch || got.Interval != 30*time.Second || !got.JSON || got.User != "bob" || got.CreateReplica == nil || got.Config == nil {
		t.Errorf("sync options: %+v", got)
	}
	if got := cmdtest.Options(t, NewCmdSync); got.Watch || got.Interval != 0 || got.User != "local" {
		t.Errorf("sync defaults: %+v", got)
	}
	cmdtest.Rejects(t, NewCmdSync, "now")
	cmdtest.Rejects(t, NewCmdSync, "--interval", "often")

	if got := cmdtest.Options(t, newCmdSyncStatus, "--json"); !got.JSON || got.Dirs == nil {
		t.Errorf("status options: %+v", got)
	}
	cmdtest.Rejects(t, newCmdSyncStatus, "extra")

	if got := cmdtest.Options(t, newCmdSyncKey, "--set", "--force"); !got.Set || !got.Force {
		t.Errorf("key --set --force: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdSyncKey); got.Set || got.Force {
		t.Errorf("key: %+v", got)
	}
	if err := cmdtest.Rejects(t, newCmdSyncKey, "--force"); err.Error() != "--force goes with --set" {
		t.Errorf("key --force: %v", err)
	}
}

// key makes a key on the first machine and prints it; --set keeps it on
// another, refuses a different one without --force.
func TestSyncKeyRun(t *testing.T) {
	t.Parallel()
	url, token := startHub(t)
	first, second := newMachine(t, url, token), newMachine(t, url, token)
	opts, ios := first.keyOptions("")
	if err := syncKeyRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	key := text(ios.Out)
	if !strings.Contains(text(ios.ErrOut), "Made a new sync key, kept in "+first.home) {
		t.Errorf("first key's stderr: %q", text(ios.ErrOut))
	}
	opts, ios = first.keyOptions("")
	opts.JSON = true
	if err := syncKeyRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var got struct{ Key, ID, Path string }
	if err := json.Unmarshal([]byte(text(ios.Out)), &got); err != nil || got.Key+"\n" != key || text(ios.ErrOut) != "" {
		t.Errorf("key --json prints the same key: %s (%v), stderr %q", text(ios.Out), err, text(ios.ErrOut))
	}

	opts, ios = second.keyOptions(key)
	if err := syncKeySetRun(opts); err != nil {
		t.Fatal(err)
	}
	if want := "Kept sync key " + got.ID + " in "; !strings.HasPrefix(text(ios.ErrOut), want) {
		t.Errorf("--set: %q, want %q…", text(ios.ErrOut), want)
	}
	opts, ios = second.keyOptions(key)
	if err := syncKeySetRun(opts); err != nil || text(ios.ErrOut) != "This machine has that key already ("+got.ID+").\n" {
		t.Errorf("--set again: %v, %q", err, text(ios.ErrOut))
	}

	// Another key is refused without --force: what the first sealed
	// could no longer be read.
	other, _ := newMachine(t, url, token).keyOptions("")
	if err := syncKeyRun(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	otherKey := text(other.IO.Out)
	opts, _ = second.keyOptions(otherKey)
	if err := syncKeySetRun(opts); loom.ErrorCode(err) != loom.ECONFLICT {
		t.Errorf("--set of another key: %v, want a conflict", err)
	}
	opts, _ = second.keyOptions(otherKey)
	opts.Force = true
	if err := syncKeySetRun(opts); err != nil {
		t.Errorf("--set --force: %v", err)
	}
	opts, _ = second.keyOptions("not a key\n")
	if err := syncKeySetRun(opts); err == nil {
		t.Error("--set took a line that is not a key")
	}
}

// Sync sends one machine's session through the hub and brings it to
// the other; status then counts both machines.
func TestSyncRunBringsSessionsAcross(t *testing.T) {
	t.Parallel()
	url, token := startHub(t)
	laptop, desktop := newMachine(t, url, token), newMachine(t, url, token)
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:deploy", Title: "flaky deploy"}
	storetest.AppendTexts(t, laptop.st, s, "why does the deploy fail", "the token expired")

	// Without a key, sync says how to make one and sends nothing.
	h, _ := laptop.hub()
	if err := syncRun(t.Context(), &Options{Hub: h, User: "alice"}); err == nil || !strings.Contains(err.Error(), "no sync key on this machine") {
		t.Fatalf("sync without a key: %v", err)
	}
	opts, ios := laptop.keyOptions("")
	if err := syncKeyRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	opts, _ = desktop.keyOptions(text(ios.Out))
	if err := syncKeySetRun(opts); err != nil {
		t.Fatal(err)
	}

	if got := laptop.sync(t); !strings.HasPrefix(got, "Sent ") || !strings.HasSuffix(got, ", received 0 records (hub "+url+")\n") || strings.HasPrefix(got, "Sent 0 ") {
		t.Errorf("laptop's sync: %q", got)
	}
	if got := desktop.sync(t); strings.Contains(got, "received 0 records") {
		t.Errorf("desktop's sync: %q, want the laptop's records", got)
	}
	msgs, err := desktop.st.Messages(t.Context(), s.ID, loom.MessageQuery{})
	if err != nil || len(msgs) != 2 || msgs[1].Parts[0].Text != "the token expired" {
		t.Errorf("the desktop holds %d messages of the laptop's session (%v)", len(msgs), err)
	}

	h, ios = desktop.hub()
	if err := syncStatusRun(t.Context(), &StatusOptions{Hub: h, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var status struct {
		Hub   string
		Host  string
		Hosts []syncrun.HostStatus
	}
	if err := json.Unmarshal([]byte(text(ios.Out)), &status); err != nil || status.Hub != url || status.Host == "" || len(status.Hosts) != 2 {
		t.Errorf("status --json: %s (%v), want the two machines", text(ios.Out), err)
	}
	h, ios = desktop.hub()
	if err := syncStatusRun(t.Context(), &StatusOptions{Hub: h}); err != nil {
		t.Fatal(err)
	}
	if got := text(ios.Out); !strings.HasPrefix(got, "Hub "+url+": 2 machines\n") || !strings.Contains(got, " (this machine): ") {
		t.Errorf("status:\n%s", got)
	}
}

// stopOnWrite cancels a context once something is written to it.
type stopOnWrite struct {
	strings.Builder
	stop context.CancelFunc
}

func (w *stopOnWrite) Write(p []byte) (int, error) {
	defer w.stop()
	return w.Builder.Write(p)
}

// --watch says once how often it syncs, then a line per sync that moved
// records, until it is interrupted.
func TestSyncRunWatch(t *testing.T) {
	t.Parallel()
	url, token := startHub(t)
	m := newMachine(t, url, token)
	opts, _ := m.keyOptions("")
	if err := syncKeyRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	storetest.AppendTexts(t, m.st, &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:w"}, "hello", "hi")
	ctx, cancel := context.WithCancel(t.Context())
	out := &stopOnWrite{stop: cancel}
	h, ios := m.hub()
	ios.Out = out
	if err := syncRun(ctx, &Options{Hub: h, User: "alice", Watch: true, Interval: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if want := "Syncing with " + url + " every 50ms; Ctrl+C stops.\n"; text(ios.ErrOut) != want {
		t.Errorf("stderr %q, want %q", text(ios.ErrOut), want)
	}
	if got := out.String(); !strings.HasPrefix(got, "Sent ") || strings.Count(got, "\n") != 1 {
		t.Errorf("stdout %q, want the first sync's line", got)
	}
}

// Sync, status and key say what is missing from the configuration.
func TestSyncRunNeedsAHub(t *testing.T) {
	t.Parallel()
	m := newMachine(t, "", "")
	h, _ := m.hub()
	if err := syncStatusRun(t.Context(), &StatusOptions{Hub: h}); err == nil || !strings.Contains(err.Error(), "no hub to sync with") {
		t.Errorf("status without a hub: %v", err)
	}
	m.cfg.Sync.Hub = "hub.example.com"
	if err := syncStatusRun(t.Context(), &StatusOptions{Hub: h}); err == nil || !strings.Contains(err.Error(), "no token for the hub") {
		t.Errorf("status without a token: %v", err)
	}
	m.cfg.Sync.Token = "T"
	if err := syncStatusRun(t.Context(), &StatusOptions{Hub: h}); err == nil || !strings.Contains(err.Error(), "is not an http:// or https:// URL") {
		t.Errorf("status with a hub not a URL: %v", err)
	}
	// A key is made without a hub: the first machine may set one later.
	opts, ios := m.keyOptions("")
	if err := syncKeyRun(t.Context(), opts); err != nil || text(ios.Out) == "" {
		t.Errorf("key without a hub: %v, %q", err, text(ios.Out))
	}
}
