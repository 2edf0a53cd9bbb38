package cli

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/loomhq/loom"
)

// lastSessionOf is the session a run ended in: the last "session <id>"
// line of its stderr.
func lastSessionOf(stderr string) string {
	id := ""
	for _, line := range lines(stderr) {
		if s, ok := strings.CutPrefix(line, "session "); ok {
			id = strings.TrimSpace(s)
		}
	}
	return id
}

// Several loom run --key K started at once on a fresh store, so that
// each finds no session with the key and prepares its own: one creates
// it, the others go on in that one (exit 0) or find it busy (exit 5),
// never a conflict. One session has the key, and it holds every turn
// that succeeded.
func TestRunKeyRace(t *testing.T) {
	const trials, runs = 3, 8
	loomBinary(t) // built before the runs start at once
	for trial := range trials {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			fx := newAgentFixture(t)
			key := fmt.Sprintf("bot:race-%d", trial)
			results := make([]result, runs)
			var wg sync.WaitGroup
			for i := range runs {
				wg.Go(func() {
					r, err := runCmd(fx.cmd(t, "run", "--key", key, fmt.Sprintf("prompt %d", i)), "")
					if err != nil {
						t.Error(err)
					}
					results[i] = r
				})
			}
			wg.Wait()
			st := fx.openStore(t)
			found, err := st.Sessions(t.Context(), loom.SessionFilter{UserID: "local", Key: key})
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != 1 {
				t.Fatalf("%d sessions with key %s", len(found), key)
			}
			s := found[0]
			msgs, err := st.Messages(t.Context(), s.ID, loom.MessageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var stored []string
			for _, m := range msgs {
				stored = append(stored, m.Role+": "+m.Text())
			}
			all := strings.Join(stored, "\n")
			ok := 0
			for i, r := range results {
				switch r.code {
				case 0:
					ok++
					prompt := fmt.Sprintf("prompt %d", i)
					if turn := "user: " + prompt + "\nassistant: echo: " + prompt; !strings.Contains(all, turn) {
						t.Errorf("run %d succeeded, but its turn is not in the session:\n%s", i, all)
					}
					if got := lastSessionOf(r.stderr); got != s.ID {
						t.Errorf("run %d says it ended in session %q, not %s:\n%s", i, got, s.ID, r.stderr)
					}
				case ExitLocked:
					if !strings.Contains(r.stderr, "in use by process") {
						t.Errorf("run %d: exit 5 without naming the holder:\n%s", i, r.stderr)
					}
				default:
					t.Errorf("run %d: exit %d, want 0 or %d\n%s", i, r.code, ExitLocked, r.stderr)
				}
			}
			if ok == 0 || len(msgs) != 2*ok {
				t.Errorf("%d runs succeeded; the session holds %d messages:\n%s", ok, len(msgs), all)
			}
			t.Logf("%d of %d runs had their turn, the others found the session busy", ok, runs)
		})
	}
}

// loom run says on exit how to resume its session, unless
// --no-resume-hint.
func TestRunResumeHint(t *testing.T) {
	fx := newAgentFixture(t)
	r := fx.mustLoom(t, "", "run", "hello")
	id := sessionOf(t, r.stderr)
	if want := "resume this session with: loom run --resume " + id + " PROMPT"; !strings.Contains(r.stderr, want) {
		t.Fatalf("stderr has no %q:\n%s", want, r.stderr)
	}
	r = fx.mustLoom(t, "", "run", "--no-resume-hint", "-c", "again")
	if sessionOf(t, r.stderr) != id || strings.Contains(r.stderr, "resume") {
		t.Fatalf("with --no-resume-hint:\n%s", r.stderr)
	}
	if r := fx.mustLoom(t, "", "run", "--help"); !strings.Contains(r.stdout, "--no-resume-hint") {
		t.Fatalf("--help does not show --no-resume-hint:\n%s", r.stdout)
	}
}

// A session made with loom run --key in a project is that project's: it
// shows in the project's session list, and not in another project's. A
// key that is not a command-line one still names one session of the
// user, from any directory.
func TestRunKeySessionIsListedInItsProject(t *testing.T) {
	fx := newAgentFixture(t)
	var ids []string
	for _, key := range []string{"notes:today", "cli:scratch"} {
		r := fx.mustLoom(t, "", "run", "--key", key, "remember the milk")
		ids = append(ids, sessionOf(t, r.stderr))
	}
	list := fx.mustLoom(t, "", "session", "list")
	for _, id := range ids {
		if !strings.Contains(list.stdout, id) {
			t.Errorf("session %s is not in its project's list:\n%s", id, list.stdout)
		}
	}
	other := fx.cmd(t, "session", "list")
	other.Dir = fx.other
	if r := execCmd(t, other, ""); r.code != 0 || strings.Contains(r.stdout, ids[0]) || strings.Contains(r.stdout, ids[1]) {
		t.Errorf("another project lists them: exit %d\n%s", r.code, r.stdout)
	}
	again := fx.cmd(t, "run", "--key", "notes:today", "and the bread")
	again.Dir = fx.other
	r := execCmd(t, again, "")
	if r.code != 0 || sessionOf(t, r.stderr) != ids[0] {
		t.Fatalf("the key from another directory: exit %d, session %q, want %s\n%s", r.code, sessionOf(t, r.stderr), ids[0], r.stderr)
	}
	s := showSession(t, fx, ids[0])
	if s.Project.ID != fx.proj.ID || s.Cwd != fx.project || s.MessageCount != 4 {
		t.Fatalf("session made in the project: project %+v, cwd %q, %d messages", s.Project, s.Cwd, s.MessageCount)
	}
}
