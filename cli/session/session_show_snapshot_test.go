package session_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// loom session show --json --full-history while another process rewinds
// the session and writes it again, on SQLite and on PostgreSQL: every
// answer's message_count and turn_count describe the messages it holds
// (the session and its messages are read in one snapshot).
func TestSessionShowDuringRewinds(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			fx := clitest.NewEmptyFixture(t)
			if engine == "postgres" {
				fx.DB = clitest.FreshSchema(t)
			} else if clitest.OnPostgres() {
				t.Skip("the command tests run on PostgreSQL")
			}
			testShowDuringRewinds(t, fx)
		})
	}
}

func testShowDuringRewinds(t *testing.T, fx *clitest.Fixture) {
	st := fx.OpenStore(t)
	ctx := context.Background()
	turn := func(n int) []*loom.Message {
		return []*loom.Message{
			clitest.TextMsg(loom.RoleUser, fmt.Sprintf("question %d", n), time.Time{}),
			clitest.TextMsg(loom.RoleAssistant, fmt.Sprintf("answer %d", n), time.Time{}),
		}
	}
	s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:rewound", Project: fx.Proj, Cwd: fx.Project, Title: "Rewound often"}
	for n := 1; n <= 3; n++ {
		if err := st.Append(ctx, s, turn(n)...); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var (
		wg      sync.WaitGroup
		rewinds int
		werr    error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := st.Rewind(ctx, s.ID, loom.RewindOptions{Turn: 1}); err != nil {
				werr = fmt.Errorf("rewind: %w", err)
				return
			}
			x, err := st.Session(ctx, s.ID)
			if err == nil {
				err = st.Append(ctx, x, append(turn(2), turn(3)...)...)
			}
			if err != nil {
				werr = fmt.Errorf("append: %w", err)
				return
			}
			rewinds++
		}
	}()
	type shown struct {
		Session  *loom.Session  `json:"session"`
		Messages []loom.Message `json:"messages"`
	}
	opts := clitest.RunOpts{Env: map[string]string{"LOOM_DB": fx.DB}}
	deadline := time.Now().Add(3 * time.Second)
	reads, seen := 0, map[int]bool{}
	for ; reads < 150 && time.Now().Before(deadline); reads++ {
		r := fx.RunWith(t, opts, "session", "show", s.ID, "--json", "--full-history")
		if r.Code != 0 {
			close(stop)
			wg.Wait()
			t.Fatalf("show: exit %d: %s", r.Code, r.Stderr)
		}
		got := clitest.DecodeJSON[shown](t, r.Stdout)
		turns := 0
		if n := len(got.Messages); n > 0 {
			turns = got.Messages[n-1].Turn
		}
		if got.Session.MessageCount != len(got.Messages) || got.Session.TurnCount != turns {
			close(stop)
			wg.Wait()
			t.Fatalf("read %d: the session says %d messages in %d turns, and %d messages in %d turns came with it",
				reads, got.Session.MessageCount, got.Session.TurnCount, len(got.Messages), turns)
		}
		seen[len(got.Messages)] = true
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	if rewinds == 0 {
		t.Fatal("no rewind ran during the reads")
	}
	t.Logf("%d reads during %d rewinds; message counts seen: %v", reads, rewinds, seen)
}
