package sync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/sqlite"
)

// Two machines change the same sessions every way a user does (import,
// append, fork, rewind, rename, archive, delete, restore, purge), each
// on the other's sessions too, and sync through a hub on each engine:
// afterwards both list, show and search exactly the same, and the hub's
// store holds no text of any message.
func TestSyncEveryChange(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	t.Run("hub on SQLite", func(t *testing.T) { testSyncEveryChange(t, "") })
	t.Run("hub on PostgreSQL", func(t *testing.T) { testSyncEveryChange(t, clitest.FreshSchema(t)) })
}

func testSyncEveryChange(t *testing.T, hubDB string) {
	a, b, _, hubHome := clitest.SyncPair(t, hubDB)
	ctx := context.Background()
	// talk appends turns to session id of fx's store, as the agent
	// would; each text holds the marker word, which the hub must never
	// hold in the clear.
	talk := func(fx *clitest.Fixture, s *loom.Session, turns int) {
		t.Helper()
		st, err := sqlite.Open(ctx, fx.DB)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for i := range turns {
			for _, role := range []string{loom.RoleUser, loom.RoleAssistant} {
				who := "desktop"
				if fx == b {
					who = "laptop"
				}
				m := &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprintf("quokka %s %d of %s on the %s", role, i, s.Title, who)}}}
				if err := st.Append(ctx, s, m); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	sess := func(title string) *loom.Session {
		return &loom.Session{UserID: "local", Key: "cli:" + strings.ReplaceAll(title, " ", "-"), Title: title}
	}
	syncAll := func() {
		t.Helper()
		for _, fx := range []*clitest.Fixture{a, b, a, b} {
			fx.MustExec(t, "sync")
		}
	}

	plan, notes, chat, diary := sess("plan"), sess("notes"), sess("chat"), sess("diary")
	talk(a, plan, 3)
	talk(a, notes, 2)
	talk(b, chat, 3)
	talk(b, diary, 3)
	// Both machines start a session with one key: both sessions stay,
	// and the one started first keeps the key.
	same1, same2 := sess("same"), sess("same")
	talk(a, same1, 1)
	talk(b, same2, 1)
	// Each machine imports an export too.
	for i, fx := range []*clitest.Fixture{a, b} {
		file := filepath.Join(fx.Home, "in.jsonl")
		id := loom.NewID()
		line := fmt.Sprintf(`{"type":"session","session":{"id":%q,"user_id":"local","kind":"main","title":"imported %d","created_at":"2026-11-20T10:00:00.000Z","updated_at":"2026-11-20T10:00:00.000Z"}}
{"type":"message","message":{"id":%q,"seq":1,"role":"user","created_at":"2026-11-20T10:00:00.000Z","parts":[{"id":"p1","type":"text","text":"quokka imported %d"}]}}
`, id, i, loom.NewID(), i)
		if err := os.WriteFile(file, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		fx.MustExec(t, "session", "import", file)
	}
	syncAll()

	// Each machine changes its own sessions and the other's.
	talk(b, plan, 1) // the laptop continues the desktop's session,
	talk(a, plan, 1) // and so does the desktop: one becomes a conflict fork
	a.MustExec(t, "session", "fork", chat.ID, "--turn", "1", "--name", "chat, again")
	b.MustExec(t, "session", "rewind", notes.ID, "--turn", "1")
	a.MustExec(t, "session", "rename", chat.ID, "chat about quokkas")
	b.MustExec(t, "session", "archive", plan.ID)
	// and the same kinds of change the other way round.
	b.MustExec(t, "session", "fork", plan.ID, "--turn", "2")
	a.MustExec(t, "session", "rewind", diary.ID, "--turn", "2")
	b.MustExec(t, "session", "rename", notes.ID, "notes, renamed")
	a.MustExec(t, "session", "archive", diary.ID)
	syncAll()
	// A delete goes to the trash everywhere once its machine had seen
	// the session's last work (work it had not seen would keep the
	// session out of the trash: see docs/sync.md), and a restore
	// elsewhere brings it back.
	a.MustExec(t, "session", "delete", notes.ID, "--yes")
	syncAll()
	b.MustExec(t, "session", "restore", notes.ID)
	a.MustExec(t, "session", "unarchive", plan.ID)
	gone := sess("gone")
	talk(b, gone, 1)
	syncAll()
	a.MustExec(t, "session", "delete", gone.ID, "--yes", "--purge")
	b.MustExec(t, "session", "delete", chat.ID, "--yes")
	syncAll()

	for _, args := range [][]string{
		{"session", "list", "-a", "--json", "--limit", "100"},
		{"session", "list", "-a", "--archived", "--json", "--limit", "100"},
	} {
		if ga, gb := normalJSON(t, a.MustExec(t, args...)), normalJSON(t, b.MustExec(t, args...)); ga != gb {
			t.Fatalf("loom %s differs:\nfirst:  %s\nsecond: %s", strings.Join(args, " "), ga, gb)
		}
	}
	// Search finds the same hits with the same scores; hits of the same
	// score and time may come in another order on each machine (the
	// order the store wrote them in).
	if ga, gb := searchHits(t, a, "quokka"), searchHits(t, b, "quokka"); !reflect.DeepEqual(ga, gb) {
		t.Fatalf("search differs:\nfirst:  %v\nsecond: %v", ga, gb)
	}
	var list []struct {
		ID           string `json:"id"`
		Title        string `json:"title"`
		ParentID     string `json:"parent_id"`
		MessageCount int    `json:"message_count"`
	}
	if err := json.Unmarshal([]byte(a.MustExec(t, "session", "list", "-a", "--json", "--limit", "100")), &list); err != nil {
		t.Fatal(err)
	}
	// plan, notes, the two imports, the two sessions keyed cli:same,
	// "chat, again", plan's fork and its conflict fork, the rewinds'
	// forks of notes and diary; not chat (in the trash), diary
	// (archived) nor gone (purged).
	if len(list) != 11 {
		t.Fatalf("the first machine lists %d sessions, want 11", len(list))
	}
	// The turns both machines added to plan at once: one machine's in
	// plan, the other's in its conflict fork, never interleaved.
	var conflicts []string
	for _, s := range list {
		if s.Title == "plan (conflict)" {
			conflicts = append(conflicts, s.ID)
			if s.ParentID != plan.ID || s.MessageCount != 8 {
				t.Errorf("the conflict fork of plan: parent %s, %d messages", s.ParentID, s.MessageCount)
			}
		}
	}
	if len(conflicts) != 1 {
		t.Fatalf("%d conflict forks of plan, want 1", len(conflicts))
	}
	// machines returns the machine each of session id's messages was
	// written on, in order.
	machines := func(id string) string {
		var show struct {
			Messages []struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(a.MustExec(t, "session", "show", id, "--json", "--full-history")), &show); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range show.Messages {
			_, who, _ := strings.Cut(m.Parts[0].Text, " on the ")
			out = append(out, who)
		}
		return strings.Join(out, " ")
	}
	six := strings.TrimSpace(strings.Repeat("desktop ", 6))
	kept, moved := machines(plan.ID), machines(conflicts[0])
	if !(kept == six+" laptop laptop" && moved == six+" desktop desktop" || kept == six+" desktop desktop" && moved == six+" laptop laptop") {
		t.Errorf("plan holds turns of %s, its conflict fork of %s: each must hold one machine's turn whole", kept, moved)
	}
	for _, fx := range []*clitest.Fixture{a, b} {
		var keys []string
		for _, id := range []string{same1.ID, same2.ID} {
			var s struct {
				Session struct {
					Key string `json:"key"`
				} `json:"session"`
			}
			if err := json.Unmarshal([]byte(fx.MustExec(t, "session", "show", id, "--json")), &s); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, s.Session.Key)
		}
		if !slices.Equal(keys, []string{"cli:same", ""}) {
			t.Errorf("the two sessions started with key cli:same have keys %q", keys)
		}
	}
	for _, s := range list {
		if ga, gb := normalJSON(t, a.MustExec(t, "session", "show", s.ID, "--json", "--full-history")), normalJSON(t, b.MustExec(t, "session", "show", s.ID, "--json", "--full-history")); ga != gb {
			t.Fatalf("session %s differs:\nfirst:  %s\nsecond: %s", s.ID, ga, gb)
		}
	}
	if r := b.Exec(t, "", "session", "show", gone.ID); r.Code != cli.ExitNotFound {
		t.Errorf("the purged session on the second machine: exit %d", r.Code)
	}

	clitest.HubHoldsNo(t, hubHome, hubDB, "quokka")
}

// searchHits returns what loom search finds of word in fx's store, every
// hit as its score, time, session and seq, in that order.
func searchHits(t *testing.T, fx *clitest.Fixture, word string) []string {
	t.Helper()
	var hits []struct {
		SessionID string  `json:"session_id"`
		Seq       int64   `json:"seq"`
		Score     float64 `json:"score"`
		CreatedAt string  `json:"created_at"`
		Snippet   string  `json:"snippet"`
	}
	if err := json.Unmarshal([]byte(fx.MustExec(t, "search", word, "-a", "--json", "--limit", "100")), &hits); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%.12f %s %s %d %s", h.Score, h.CreatedAt, h.SessionID, h.Seq, h.Snippet))
	}
	slices.Sort(out)
	return out
}
