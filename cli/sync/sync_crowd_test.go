package sync_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// Twenty machines of one user sync with one hub at the same moment,
// three times (each time after a turn in a session of each machine's
// own): the hub runs two of a user's pushes at once and refuses the
// others with Retry-After, which loom sync waits out, so every sync
// succeeds, and after the rounds every machine holds every machine's
// session.
func TestSyncTwentyAtOnce(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	t.Run("hub on SQLite", func(t *testing.T) { testSyncTwentyAtOnce(t, "") })
	t.Run("hub on PostgreSQL", func(t *testing.T) { testSyncTwentyAtOnce(t, clitest.FreshSchema(t)) })
}

func testSyncTwentyAtOnce(t *testing.T, hubDB string) {
	const machines, rounds = 20, 3
	_, _, syncEnv := clitest.StartHub(t, hubDB)
	fxs := make([]*clitest.Fixture, machines)
	want := make([]string, machines)
	for i := range fxs {
		fxs[i] = clitest.NewEmptyFixture(t)
		fxs[i].ExtraEnv = syncEnv
		want[i] = fmt.Sprintf("machine %02d", i)
	}
	slices.Sort(want)
	key := strings.TrimSpace(fxs[0].MustExec(t, "sync", "key"))
	if failed := atOnce(t, fxs[1:], want[1:], key+"\n", "sync", "key", "--set"); len(failed) > 0 {
		t.Fatalf("set the key: %s", strings.Join(failed, "; "))
	}
	for round := range rounds {
		for i, fx := range fxs {
			clitest.Say(t, fx, want[i], 1)
		}
		if failed := atOnce(t, fxs, want, "", "sync"); len(failed) > 0 {
			t.Fatalf("round %d: %d of %d syncs failed: %s", round+1, len(failed), machines, strings.Join(failed, "; "))
		}
	}
	for i, fx := range fxs {
		if got := clitest.Titles(t, fx); !slices.Equal(got, want) {
			t.Fatalf("%s holds %q, want %q", want[i], got, want)
		}
	}
}

// atOnce starts loom with args on every machine of fxs, all before any
// is waited for, with input on standard input, and returns what each
// that failed said, after its name in names.
func atOnce(t *testing.T, fxs []*clitest.Fixture, names []string, input string, args ...string) []string {
	t.Helper()
	cmds := make([]*exec.Cmd, len(fxs))
	errs := make([]*bytes.Buffer, len(fxs))
	for i, fx := range fxs {
		cmds[i] = exec.Command(clitest.LoomBinary(t), args...)
		cmds[i].Dir, cmds[i].Env = fx.Project, fx.BinEnv()
		cmds[i].Stdin = strings.NewReader(input)
		errs[i] = &bytes.Buffer{}
		cmds[i].Stderr = errs[i]
	}
	var failed []string
	for i, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", names[i], err))
			cmds[i] = nil
		}
	}
	for i, cmd := range cmds {
		if cmd == nil {
			continue
		}
		if err := cmd.Wait(); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v, %s", names[i], err, strings.TrimSpace(errs[i].String())))
		}
	}
	return failed
}
