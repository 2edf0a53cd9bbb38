package chat_test

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// sessionLines are the ids of the "session <id>" lines of stderr, and
// of the header chat prints when it resumes a session ("resuming session
// <id> …"), which names it instead.
func sessionLines(stderr string) []string {
	var ids []string
	for _, line := range clitest.Lines(stderr) {
		if s, ok := strings.CutPrefix(line, "session "); ok {
			ids = append(ids, strings.TrimSpace(s))
		}
		if s, ok := strings.CutPrefix(line, "resuming session "); ok {
			ids = append(ids, strings.Fields(s)[0])
		}
	}
	return ids
}

// Several loom run --key K (and chat --key K) started at once on a fresh
// store, so that each finds no session with the key and prepares its
// own: one creates it, the others go on in that one (exit 0) or find it
// busy (exit 5), never a conflict. One session has the key, and it holds
// every turn that succeeded. A script reads the session from the one
// "session <id>" line a process prints, with --json too: it names that
// session, never one the process prepared and lost the key of; a refused
// process prints none. The model answers at once in the first trial, so
// that processes that lose the key may still have their turn in the
// winner's session, and slowly in the others, so that the winner holds
// the session while the others look for it.
func TestRunKeyRace(t *testing.T) {
	t.Parallel()
	const trials, runs = 3, 8
	clitest.LoomBinary(t) // built before the runs start at once
	for trial := range trials {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			fx := clitest.NewAgentFixture(t)
			for range runs {
				fx.Srv.Enqueue(openaitest.Reply{Text: "noted", Delay: time.Duration(trial) * 100 * time.Millisecond})
			}
			key := fmt.Sprintf("bot:race-%d", trial)
			results := make([]clitest.Result, runs)
			var wg sync.WaitGroup
			for i := range runs {
				wg.Go(func() {
					prompt := fmt.Sprintf("prompt %d", i)
					var cmd *exec.Cmd
					switch i % 4 {
					case 1:
						cmd = fx.Cmd(t, "run", "--key", key, "--json", prompt)
					case 3:
						cmd = fx.Cmd(t, "chat", "--key", key)
					default:
						cmd = fx.Cmd(t, "run", "--key", key, prompt)
					}
					r, err := clitest.RunCmd(cmd, prompt+"\n")
					if err != nil {
						t.Error(err)
					}
					results[i] = r
				})
			}
			wg.Wait()
			st := fx.OpenStore(t)
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
			ok, refused := 0, 0
			for i, r := range results {
				ids := sessionLines(r.Stderr)
				switch r.Code {
				case 0:
					ok++
					prompt := fmt.Sprintf("prompt %d", i)
					if turn := "user: " + prompt + "\nassistant: noted"; !strings.Contains(all, turn) {
						t.Errorf("run %d succeeded, but its turn is not in the session:\n%s", i, all)
					}
					if len(ids) != 1 || ids[0] != s.ID {
						t.Errorf("run %d announced sessions %q, want only %s:\n%s", i, ids, s.ID, r.Stderr)
					}
				case cli.ExitLocked:
					refused++
					if !strings.Contains(r.Stderr, "in use by process") {
						t.Errorf("run %d: exit 5 without naming the holder:\n%s", i, r.Stderr)
					}
					if len(ids) > 0 {
						t.Errorf("run %d was refused, yet announced sessions %q (the one with the key is %s):\n%s", i, ids, s.ID, r.Stderr)
					}
				default:
					t.Errorf("run %d: exit %d, want 0 or %d\n%s", i, r.Code, cli.ExitLocked, r.Stderr)
				}
			}
			if ok == 0 || len(msgs) != 2*ok {
				t.Errorf("%d runs succeeded; the session holds %d messages:\n%s", ok, len(msgs), all)
			}
			t.Logf("%d of %d runs had their turn, %d found the session busy", ok, runs, refused)
		})
	}
}

// loom run says on exit how to resume its session, unless
// --no-resume-hint.
func TestRunResumeHint(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	r := fx.MustLoom(t, "", "run", "hello")
	id := clitest.SessionOf(t, r.Stderr)
	if want := "resume this session with: loom run --resume " + id + " PROMPT"; !strings.Contains(r.Stderr, want) {
		t.Fatalf("stderr has no %q:\n%s", want, r.Stderr)
	}
	r = fx.MustLoom(t, "", "run", "--no-resume-hint", "-c", "again")
	if clitest.SessionOf(t, r.Stderr) != id || strings.Contains(r.Stderr, "resume") {
		t.Fatalf("with --no-resume-hint:\n%s", r.Stderr)
	}
	if r := fx.MustLoom(t, "", "run", "--help"); !strings.Contains(r.Stdout, "--no-resume-hint") {
		t.Fatalf("--help does not show --no-resume-hint:\n%s", r.Stdout)
	}
}

// A session made with loom run --key in a project is that project's: it
// shows in the project's session list, and not in another project's. A
// key that is not a command-line one still names one session of the
// user, from any directory.
func TestRunKeySessionIsListedInItsProject(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	var ids []string
	for _, key := range []string{"notes:today", "cli:scratch"} {
		r := fx.MustLoom(t, "", "run", "--key", key, "remember the milk")
		ids = append(ids, clitest.SessionOf(t, r.Stderr))
	}
	list := fx.MustLoom(t, "", "session", "list")
	for _, id := range ids {
		if !strings.Contains(list.Stdout, id) {
			t.Errorf("session %s is not in its project's list:\n%s", id, list.Stdout)
		}
	}
	other := fx.Cmd(t, "session", "list")
	other.Dir = fx.Other
	if r := clitest.ExecCmd(t, other, ""); r.Code != 0 || strings.Contains(r.Stdout, ids[0]) || strings.Contains(r.Stdout, ids[1]) {
		t.Errorf("another project lists them: exit %d\n%s", r.Code, r.Stdout)
	}
	again := fx.Cmd(t, "run", "--key", "notes:today", "and the bread")
	again.Dir = fx.Other
	r := clitest.ExecCmd(t, again, "")
	if r.Code != 0 || clitest.SessionOf(t, r.Stderr) != ids[0] {
		t.Fatalf("the key from another directory: exit %d, session %q, want %s\n%s", r.Code, clitest.SessionOf(t, r.Stderr), ids[0], r.Stderr)
	}
	s := clitest.ShowSession(t, fx, ids[0])
	if s.Project.ID != fx.Proj.ID || s.Cwd != fx.Project || s.MessageCount != 4 {
		t.Fatalf("session made in the project: project %+v, cwd %q, %d messages", s.Project, s.Cwd, s.MessageCount)
	}
}

// loom run takes --new, as bare loom does: a new session, the default;
// beside -c, --resume or --key it is a usage error.
func TestRunNew(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	first := clitest.SessionOf(t, fx.MustLoom(t, "", "run", "hello").Stderr)
	second := clitest.SessionOf(t, fx.MustLoom(t, "", "run", "--new", "hello again").Stderr)
	if second == "" || second == first {
		t.Fatalf("run --new: session %q after %q", second, first)
	}
	r := fx.Cmd(t, "run", "--new", "-c", "both")
	if res := clitest.ExecCmd(t, r, ""); res.Code != 2 || !strings.Contains(res.Stderr, "only one of --new, --continue") {
		t.Fatalf("run --new -c: exit %d, %q", res.Code, res.Stderr)
	}
}
