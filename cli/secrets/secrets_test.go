package secrets

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/cmdtest"
	"github.com/loomhq/loom/internal/storetest"
	"github.com/loomhq/loom/paths"
	sec "github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

// awsKey is a planted AWS access key id.
const awsKey = "AKIAQ3EGRB7XK2M4T6ZW"

// planted is a SQLite store in a temporary directory with a session
// that holds awsKey and one that holds no secret, and the options of
// loom secrets over it.
type planted struct {
	st          loom.Store
	leak, clean *loom.Session
	common      func() (Common, *term.IOStreams)
}

func plant(t *testing.T) *planted {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	st, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := &planted{st: st,
		leak:  &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:leak", Title: "deploy"},
		clean: &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:clean", Title: "rename"}}
	storetest.AppendTexts(t, st, p.leak, "deploy with the key "+awsKey+" please", "deployed")
	storetest.AppendTexts(t, st, p.clean, "rename the handler", "renamed")
	env := map[string]string{"LOOM_HOME": filepath.Join(dir, "home")}
	open := func(context.Context) (loom.Store, error) { return st, nil }
	scope := command.Scope{User: func() string { return "local" }, Project: func() (loom.Project, error) { return loom.Project{}, os.ErrNotExist }}
	p.common = func() (Common, *term.IOStreams) {
		ios, _, _, _ := term.Test()
		return Common{
			IO:        ios,
			ReadStore: open,
			Resolve:   scope.Resolve,
			Detector:  func() (*sec.Detector, error) { return sec.Default(), nil },
			Dirs:      func() (paths.Dirs, error) { return paths.Resolve(func(k string) string { return env[k] }) },
			DBURL:     func() (string, error) { return db, nil },
			User:      "local",
		}, ios
	}
	return p
}

func stdout(ios *term.IOStreams) string { return ios.Out.(interface{ String() string }).String() }

// scan runs loom secrets scan --json and returns its report.
func (p *planted) scan(t *testing.T, ref string) *ScanReport {
	t.Helper()
	c, ios := p.common()
	c.JSON = true
	if err := scanRun(t.Context(), &ScanOptions{Common: c, Ref: ref}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout(ios), awsKey) {
		t.Fatalf("scan printed the key:\n%s", stdout(ios))
	}
	var rep ScanReport
	if err := json.Unmarshal([]byte(stdout(ios)), &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// A scan finds the planted key, says where and never prints it; the
// next scan reads only the last message of each session again.
func TestSecretsScanFindsPlantedKey(t *testing.T) {
	t.Parallel()
	p := plant(t)
	rep := p.scan(t, "")
	if rep.Secrets != 1 || len(rep.Sessions) != 1 || rep.Sessions[0].SessionID != p.leak.ID || rep.Sessions[0].Rules["aws-access-key"] != 1 ||
		rep.ScannedSessions != 2 || rep.ScannedMessages != 4 {
		t.Fatalf("scan: %+v", rep)
	}
	if pl := rep.Sessions[0].Places[0]; pl.Seq != 1 || pl.Field != "text" || pl.Hint != "AK…ZW" {
		t.Errorf("place %+v", pl)
	}
	if again := p.scan(t, ""); again.Secrets != 1 || again.ScannedMessages != 2 {
		t.Errorf("second scan: %d secrets from %d messages, want 1 from 2", again.Secrets, again.ScannedMessages)
	}
	if one := p.scan(t, p.clean.ID); one.Secrets != 0 || one.ScannedSessions != 1 {
		t.Errorf("scan of the clean session: %+v", one)
	}
	c, ios := p.common()
	if err := scanRun(t.Context(), &ScanOptions{Common: c, Full: true}); err != nil {
		t.Fatal(err)
	}
	if got := stdout(ios); !strings.Contains(got, "1 secret in 1 session of 2 sessions (4 messages read)") {
		t.Errorf("scan --full:\n%s", got)
	}
}

// redact --dry-run changes nothing; redact --yes replaces the key in the
// store with its rule's marker, and a scan then finds nothing.
func TestSecretsRedactReplacesPlantedKey(t *testing.T) {
	t.Parallel()
	p := plant(t)
	redact := func(dryRun bool) string {
		t.Helper()
		c, ios := p.common()
		opts := &RedactOptions{Common: c, Store: c.ReadStore, DryRun: dryRun, Yes: true}
		if err := redactRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		return stdout(ios)
	}
	text := func() string {
		t.Helper()
		msgs, err := p.st.Messages(t.Context(), p.leak.ID, loom.MessageQuery{Oldest: true})
		if err != nil {
			t.Fatal(err)
		}
		return msgs[0].Parts[0].Text
	}
	if got := redact(true); !strings.Contains(got, "would redact 1 secret in 1 part of 1 session; nothing was changed") || !strings.Contains(text(), awsKey) {
		t.Errorf("redact --dry-run: %q, the message now %q", got, text())
	}
	if got := redact(false); !strings.Contains(got, "redacted 1 secret in 1 part") {
		t.Errorf("redact: %q", got)
	}
	if got := text(); got != "deploy with the key [REDACTED:aws-access-key] please" {
		t.Errorf("the message after redact: %q", got)
	}
	if rep := p.scan(t, ""); rep.Secrets != 0 {
		t.Errorf("scan after redact: %+v", rep)
	}
}

// The commands fill their options from the invocation, flags and
// arguments.
func TestNewCmdSecretsOptions(t *testing.T) {
	t.Parallel()
	scan := cmdtest.Options(t, newCmdScan, "--full", "0196a3b2")
	if !scan.Full || scan.Ref != "0196a3b2" || scan.User != "local" || scan.Detector == nil || scan.DBURL == nil {
		t.Errorf("scan: %+v", scan)
	}
	redact := cmdtest.Options(t, newCmdRedact, "--dry-run")
	if !redact.DryRun || redact.Yes || redact.Ref != "" || redact.Store == nil {
		t.Errorf("redact: %+v", redact)
	}
}
