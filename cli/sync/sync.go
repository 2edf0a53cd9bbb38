// Package sync is loom's sync commands: sync (once or --watch), sync status
// and sync key, which keep a machine's sessions in step with the user's
// other machines through a hub.
package sync

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/synclog"
	"github.com/loomhq/loom/syncpath"
	"github.com/loomhq/loom/syncrun"
)

// defaultSyncInterval is how often `loom sync --watch` syncs unless
// [sync] interval says otherwise.
const defaultSyncInterval = 5 * time.Second

// NewCmdSync builds loom sync and its status and key commands. runF,
// when not nil, is called with the options instead of running the
// command (for tests).
func NewCmdSync(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := &Options{Hub: newHub(inv)}
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Keep this machine's sessions in step with your other machines through a hub",
		Long: `Sync sends this machine's changes to a hub (a loom serve that all your
machines reach) and brings in the changes of your other machines, so that
every machine holds every session: list, search and resume work offline.
What goes to the hub is sealed with your sync key, which never leaves your
machines: the hub sees ciphertext only.

Set up: [sync] hub and token in config.toml (or LOOM_SYNC_HUB and
LOOM_SYNC_TOKEN), then "loom sync key" on your first machine and
"loom sync key --set" on the others. See docs/sync.md.

A store restored from a backup, or copied to another machine, needs
nothing but "loom sync": it finds that its log and the hub's part, takes
a new host id and keeps what both sides wrote, and says so in one line.
Several syncs of one store at once (--watch and one by hand) are safe.

A hub lost, emptied or restored from an old copy: start one (a fresh
hub makes a new token: give it to each machine) and run "loom sync" on
each machine: every machine keeps the records of the others it pulled
and sends the hub what it lacks, so nothing any machine holds is lost.
"loom sync status" says when the hub lacks records this machine holds.

Every record is sealed and signed. A record of another machine that does
not verify or apply (altered on the hub, junk put there with a token) is
set aside, said in one line, and the rest applied: sync exits 0. One
this machine cannot read yet (another sync key, a newer loom) stops that
machine's records only, and sync exits 1 naming it.`,
		Example: `  loom sync
  loom sync --watch
  loom sync status
  loom sync key | ssh laptop loom sync key --set`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return syncRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Watch, "watch", "w", false, "keep syncing until interrupted")
	cmd.Flags().DurationVar(&opts.Interval, "interval", 0, "how often --watch syncs (default [sync] interval, else 5s)")
	cmd.AddCommand(newCmdSyncStatus(inv, nil), newCmdSyncKey(inv, nil))
	return cmd
}

// Hub is what reaching the hub from this store takes: the streams, a
// store opener, the configuration (the hub and its token) and the
// directories (the sync key).
type Hub struct {
	IO *term.IOStreams
	// CreateReplica opens the store, creating it if missing, and the
	// replica of it that sync runs on (nil for a store whose engine
	// keeps no sync log of its own).
	CreateReplica func(context.Context) (loom.Engine, syncrun.Store, error)
	Config        func() (*config.Config, string, error)
	Dirs          func() (paths.Dirs, error)
}

func newHub(inv *command.Invocation) Hub {
	return Hub{IO: inv.IO, CreateReplica: inv.CreateReplica, Config: inv.Config, Dirs: inv.Dirs}
}

// Options are the options of `loom sync`.
type Options struct {
	Hub
	User string
	JSON bool

	Watch bool
	// Interval is how often --watch syncs; zero for [sync] interval.
	Interval time.Duration
}

// StatusOptions are the options of `loom sync status`.
type StatusOptions struct {
	Hub
	JSON bool
}

// KeyOptions are the options of `loom sync key`.
type KeyOptions struct {
	IO     *term.IOStreams
	Config func() (*config.Config, string, error)
	Dirs   func() (paths.Dirs, error)
	JSON   bool

	Set, Force bool
}

// syncer is what one sync needs: the store, the hub and the key.
type syncer struct {
	st       syncrun.Store
	hub      *hub.Client
	key      envelope.Key
	interval time.Duration
}

// syncSetup reads the settings of sync and opens the store.
func syncSetup(ctx context.Context, h *Hub, needKey bool) (*syncer, error) {
	d, err := h.Dirs()
	if err != nil {
		return nil, err
	}
	c, path, err := h.Config()
	if err != nil {
		return nil, err
	}
	hc, err := syncHub(c, path)
	if err != nil {
		return nil, err
	}
	s := &syncer{hub: hc, interval: c.Sync.Interval}
	if needKey {
		key, ok, err := readSyncKey(h.IO.ErrOut, d.SyncKeyFile())
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, loom.Errorf(loom.EINVALID, "no sync key on this machine: run \"loom sync key\" on your first machine and \"loom sync key --set\" here with what it prints")
		}
		s.key = key
	}
	_, ss, err := h.CreateReplica(ctx)
	if err != nil {
		return nil, err
	}
	if ss == nil {
		return nil, loom.Errorf(loom.EINVALID, "this store does not sync: a PostgreSQL store is shared by your machines already (sync keeps embedded SQLite stores in step)")
	}
	s.st = ss
	return s, nil
}

// syncHub returns the client of the hub c names, from the file
// configFile.
func syncHub(c *config.Config, configFile string) (*hub.Client, error) {
	switch {
	case c.Sync.Hub == "":
		return nil, loom.Errorf(loom.EINVALID, "no hub to sync with: set [sync] hub in %s, or LOOM_SYNC_HUB, to a loom serve all your machines reach (see docs/sync.md)", configFile)
	case c.Sync.Token == "":
		return nil, loom.Errorf(loom.EINVALID, "no token for the hub: set [sync] token in %s, or LOOM_SYNC_TOKEN, to a token of yours on the hub (loom token create there)", configFile)
	}
	if u, err := url.Parse(c.Sync.Hub); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, loom.Errorf(loom.EINVALID, "hub %q is not an http:// or https:// URL: write it as http://HOST:PORT (https:// when the hub is behind TLS)", c.Sync.Hub)
	}
	return &hub.Client{URL: c.Sync.Hub, Token: c.Sync.Token}, nil
}

// syncClient returns the client of the configured hub.
func syncClient(loadConfig func() (*config.Config, string, error)) (*hub.Client, error) {
	c, path, err := loadConfig()
	if err != nil {
		return nil, err
	}
	return syncHub(c, path)
}

func syncRun(ctx context.Context, opts *Options) error {
	watch, interval := opts.Watch, opts.Interval
	s, err := syncSetup(ctx, &opts.Hub, true)
	if err != nil {
		return err
	}
	warnedUser := false
	var waited map[syncrun.Waiting]bool // the waits said last
	report := func(r syncrun.Result) error {
		if r.User != "" && r.User != opts.User && !warnedUser {
			warnedUser = true
			fmt.Fprintf(opts.IO.ErrOut, "The hub's token is %s's and this machine's user is %s: the sessions sync brings are %s's, which this user does not see; set LOOM_USER=%s, or use a token of %s's.\n",
				r.User, opts.User, r.User, r.User, opts.User)
		}
		if r.Rehomed != nil {
			// Also with --json, whose answer has "rehomed".
			fmt.Fprintf(opts.IO.ErrOut, "This store's sync log and the hub's part after record %d of host %s (a store restored from a backup, or copied to another machine): it syncs on as host %s, sending the %s it wrote since, and takes the hub's records of %s as another machine's; nothing is lost.\n",
				r.Rehomed.Shared, r.Rehomed.Old, r.Rehomed.New, human.Plural(r.Rehomed.Moved, "record"), r.Rehomed.Old)
		}
		for _, c := range r.Conflicts {
			// Also with --json, whose answer has "conflicts".
			title := c.Title
			if title == "" {
				title = c.SessionTitle + " (conflict)"
			}
			fmt.Fprintf(opts.IO.ErrOut, "Your turns in %q went on at the same place as another machine's: its turns kept the session and yours are in %q (%s); loom -r %s continues them.\n",
				c.SessionTitle, title, c.ID, c.ID)
		}
		if r.Reseeded > 0 {
			// Also with --json, whose answer has "reseeded".
			fmt.Fprintf(opts.IO.ErrOut, "The hub lacked %s of other machines that this store holds (a hub restored from an old copy, or emptied): sent them again; nothing is lost.\n",
				human.Plural(r.Reseeded, "record"))
		}
		if r.Scrubbed {
			// Also with --json, whose answer has "scrubbed".
			fmt.Fprintln(opts.IO.ErrOut, "Another machine redacted secrets: the text it replaced is gone from this store's files too (search index merged, file rebuilt, write-ahead log emptied).")
		}
		// Also with --json, whose answer has "set_aside": one line each
		// (past syncpath.MaxLines, one for the rest), and the sync
		// exits 0, as a team's does.
		for _, l := range syncpath.Lines(r.SetAside, syncrun.Nobody) {
			fmt.Fprintf(opts.IO.ErrOut, "loom: sync: %s\n", l)
		}
		if opts.JSON {
			return command.WriteJSON(opts.IO.Out, r)
		}
		if !watch || r.Pushed+r.Pulled > 0 {
			fmt.Fprintf(opts.IO.Out, "Sent %s, received %s (hub %s)\n", human.Plural(r.Pushed, "record"), human.Plural(r.Pulled, "record"), s.hub.URL)
		}
		// --watch says a wait once, not every interval.
		said := waited
		waited = map[syncrun.Waiting]bool{}
		for _, w := range r.Waiting {
			waited[w] = true
			if !said[w] {
				fmt.Fprintf(opts.IO.ErrOut, "Records of host %s from %d on wait (%s); a later sync applies them, once a machine that holds what they follow has synced (each sends the hub what it lacks).\n",
					w.Host, w.Index, w.Reason)
			}
		}
		return nil
	}
	if !watch {
		r, err := syncrun.Once(ctx, s.hub, s.st, s.key)
		if err != nil {
			return err
		}
		return report(r)
	}
	if interval <= 0 {
		interval = s.interval
	}
	if interval <= 0 {
		interval = defaultSyncInterval
	}
	if !opts.JSON {
		fmt.Fprintf(opts.IO.ErrOut, "Syncing with %s every %s; Ctrl+C stops.\n", s.hub.URL, interval)
	}
	failing := "" // the problem said last, until a sync goes through
	return syncrun.Watch(ctx, s.hub, s.st, s.key, interval, func(r syncrun.Result, err error) error {
		if err != nil {
			// The same problem is said once, not every interval.
			if msg := loom.ErrorMessage(err); msg != failing {
				failing = msg
				fmt.Fprintf(opts.IO.ErrOut, "loom sync: %s; trying again every %s\n", msg, interval)
			}
			return nil
		}
		if failing != "" {
			failing = ""
			fmt.Fprintln(opts.IO.ErrOut, "loom sync: syncing again.")
		}
		return report(r)
	})
}

// newCmdSyncStatus builds loom sync status. runF, when not nil, is
// called with the options instead of running the command (for tests).
func newCmdSyncStatus(inv *command.Invocation, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{Hub: newHub(inv)}
	return &cobra.Command{
		Use:   "status",
		Short: "Show this machine's host and what the hub holds of each of your machines",
		Example: `  loom sync status
  loom sync status --json`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return syncStatusRun(cmd.Context(), opts)
		},
	}
}

func syncStatusRun(ctx context.Context, opts *StatusOptions) error {
	s, err := syncSetup(ctx, &opts.Hub, false)
	if err != nil {
		return err
	}
	host, out, err := syncrun.Status(ctx, s.hub, s.st)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, struct {
			Hub   string               `json:"hub"`
			Host  synclog.HostID       `json:"host"`
			Hosts []syncrun.HostStatus `json:"hosts"`
		}{s.hub.URL, host, out})
	}
	if host == "" {
		fmt.Fprintf(opts.IO.Out, "This machine has not synced yet (loom sync).\n")
	}
	// This machine counts before it has sent anything too.
	fmt.Fprintf(opts.IO.Out, "Hub %s: %s\n", s.hub.URL, human.Plural(len(out), "machine"))
	for _, x := range out {
		who, behind := "", ""
		switch {
		case x.This:
			who = " (this machine)"
			if x.Behind > 0 {
				behind = fmt.Sprintf(", %s to send", human.Plural(int(x.Behind), "record"))
			}
		case x.Behind > 0:
			behind = fmt.Sprintf(", %s to receive", human.Plural(int(x.Behind), "record"))
		}
		if x.HubLacks > 0 {
			behind += fmt.Sprintf(", and the hub lacks %s of it that this machine holds (loom sync sends them)", human.Plural(int(x.HubLacks), "record"))
		}
		fmt.Fprintf(opts.IO.Out, "  %s%s: %s on the hub%s\n", x.Host, who, human.Plural(int(x.Records), "record"), behind)
	}
	return nil
}

// newCmdSyncKey builds loom sync key. runF, when not nil, is called with
// the options instead of running the command (for tests).
func newCmdSyncKey(inv *command.Invocation, runF func(*KeyOptions) error) *cobra.Command {
	opts := &KeyOptions{IO: inv.IO, Config: inv.Config, Dirs: inv.Dirs}
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Print your sync key, or keep the one your first machine printed",
		Long: `Your sync key seals what sync sends to the hub; it never leaves your
machines. On your first machine "loom sync key" makes it and prints it;
carry it to each other machine and give it to "loom sync key --set" on
standard input (so that it stays out of your shell's history). Anyone
with the key and your hub token can read your sessions: keep it as you
keep a password.`,
		Example: `  loom sync key
  loom sync key --set < key.txt
  loom sync key | ssh laptop loom sync key --set`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = inv.JSON()
			if opts.Force && !opts.Set {
				return command.UsageErrorf("--force goes with --set")
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.Set {
				return syncKeySetRun(opts)
			}
			return syncKeyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Set, "set", false, "keep the key read from standard input as this machine's")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "with --set: replace a different key this machine has")
	return cmd
}

// readSyncKey reads the key kept in path as readSecret does (a key file
// others may read is set back to 0600); ok is false when there is none.
func readSyncKey(errOut io.Writer, path string) (envelope.Key, bool, error) {
	b, err := command.ReadSecret(errOut, path)
	if errors.Is(err, fs.ErrNotExist) {
		return envelope.Key{}, false, nil
	}
	if err != nil {
		return envelope.Key{}, false, fmt.Errorf("read the sync key: %w", err)
	}
	key, err := envelope.ParseKey(string(b))
	if err != nil {
		return envelope.Key{}, false, loom.Errorf(loom.EINVALID, "%s: %v", path, err)
	}
	return key, true, nil
}

func syncKeyRun(ctx context.Context, opts *KeyOptions) error {
	d, err := opts.Dirs()
	if err != nil {
		return err
	}
	path := d.SyncKeyFile()
	key, ok, err := readSyncKey(opts.IO.ErrOut, path)
	if err != nil {
		return err
	}
	if !ok {
		// A machine given a new key when the hub holds the user's
		// records under another could not sync; say what to run.
		if c, err := syncClient(opts.Config); err == nil {
			if err := syncrun.CheckNewKey(ctx, c); err != nil {
				return err
			}
		}
		if key, err = envelope.NewKey(); err != nil {
			return err
		}
		if err := command.WriteSecret(filepath.Dir(path), path, key.Text()); err != nil {
			return fmt.Errorf("keep the sync key: %w", err)
		}
		if !opts.JSON {
			fmt.Fprintf(opts.IO.ErrOut, "Made a new sync key, kept in %s. Give it to \"loom sync key --set\" on your other machines.\n", path)
		}
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, struct {
			Key  string `json:"key"`
			ID   string `json:"id"`
			Path string `json:"path"`
		}{key.Text(), key.ID(), path})
	}
	fmt.Fprintln(opts.IO.Out, key.Text())
	return nil
}

func syncKeySetRun(opts *KeyOptions) error {
	d, err := opts.Dirs()
	if err != nil {
		return err
	}
	if opts.IO.IsStdinTTY() {
		fmt.Fprint(opts.IO.ErrOut, "Paste the sync key your first machine printed, then Enter: ")
	}
	line, err := bufio.NewReader(io.LimitReader(opts.IO.In, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the key: %w", err)
	}
	key, err := envelope.ParseKey(line)
	if err != nil {
		return command.UsageErrorf("%v", err)
	}
	path := d.SyncKeyFile()
	old, ok, err := readSyncKey(opts.IO.ErrOut, path)
	switch {
	case err != nil && !opts.Force:
		return err
	case ok && old.ID() == key.ID():
		fmt.Fprintf(opts.IO.ErrOut, "This machine has that key already (%s).\n", key.ID())
		return nil
	case ok && !opts.Force:
		return loom.Errorf(loom.ECONFLICT, "this machine has another sync key (%s); records sealed with it could no longer be read here: add --force to replace it", old.ID())
	}
	if err := command.WriteSecret(filepath.Dir(path), path, key.Text()); err != nil {
		return fmt.Errorf("keep the sync key: %w", err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Kept sync key %s in %s.\n", key.ID(), strings.TrimSpace(path))
	return nil
}
