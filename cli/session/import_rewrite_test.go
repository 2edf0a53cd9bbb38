package session_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// geminiRecording is a Gemini CLI conversation as its one-document
// recording (session-*.json) holds it. Gemini CLI writes that file whole
// on every change, by truncating it and writing it again
// (fs.writeFileSync of JSON.stringify(conversation, null, 2)), not
// atomically: a reader can find it empty or half written.
type geminiRecording struct {
	SessionID   string            `json:"sessionId"`
	ProjectHash string            `json:"projectHash"`
	StartTime   string            `json:"startTime"`
	LastUpdated string            `json:"lastUpdated"`
	Messages    []json.RawMessage `json:"messages"`

	file string
}

// realGeminiRecording is the conversation of the real Gemini CLI
// recording in testdata (a message's last copy in the place its id first
// appeared, as Gemini CLI replays it), to be written as a one-document
// recording where Gemini CLI keeps it under home.
func realGeminiRecording(t *testing.T, home string) *geminiRecording {
	t.Helper()
	f, err := os.Open(filepath.Join(clitest.Samples, "gemini", "vibecodingtracker-gemini.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := &geminiRecording{}
	at := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			SessionID string `json:"sessionId"`
			ID        string `json:"id"`
			Set       *struct {
				LastUpdated string `json:"lastUpdated"`
			} `json:"$set"`
		}
		line := slices.Clone(sc.Bytes())
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.SessionID != "":
			if err := json.Unmarshal(line, g); err != nil {
				t.Fatal(err)
			}
			g.Messages = nil
		case r.Set != nil:
			g.LastUpdated = r.Set.LastUpdated
		case r.ID != "":
			if i, ok := at[r.ID]; ok {
				g.Messages[i] = line
			} else {
				at[r.ID] = len(g.Messages)
				g.Messages = append(g.Messages, line)
			}
		}
	}
	if err := sc.Err(); err != nil || g.SessionID == "" || len(g.Messages) == 0 {
		t.Fatalf("the real recording: %v, session %q, %d messages", err, g.SessionID, len(g.Messages))
	}
	g.file = filepath.Join(home, ".gemini", "tmp", g.ProjectHash, "chats", "session-2026-04-23T12-52-"+g.SessionID[:8]+".json")
	if err := os.MkdirAll(filepath.Dir(g.file), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

// turn adds turn i, a prompt and a reply shaped like the real
// recording's, writing the file after each as Gemini CLI does.
func (g *geminiRecording) turn(t *testing.T, i int) {
	t.Helper()
	at := time.Date(2026, 4, 23, 13, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	stamp := func(d time.Duration) string { return at.Add(d).Format("2006-01-02T15:04:05.000Z") }
	add := func(m map[string]any) {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		g.Messages = append(g.Messages, b)
		g.LastUpdated = m["timestamp"].(string)
		g.write(t)
	}
	add(map[string]any{
		"id": fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i), "timestamp": stamp(0), "type": "user",
		"content": []any{map[string]any{"text": fmt.Sprintf("gemini prompt %d", i)}},
	})
	add(map[string]any{
		"id": fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i+1), "timestamp": stamp(5 * time.Second), "type": "gemini",
		"content":  fmt.Sprintf("gemini reply %d", i),
		"thoughts": []any{map[string]any{"subject": "Answering", "description": fmt.Sprintf("Turn %d needs a short answer.", i), "timestamp": stamp(2 * time.Second)}},
		"tokens":   map[string]any{"input": 40000 + i, "output": 20, "cached": 32000, "thoughts": 100, "tool": 0, "total": 40120 + i},
		"model":    "gemini-3-flash-preview",
	})
}

// write writes the whole recording as Gemini CLI does, but in steps
// that each reach the disk before the next: the file is truncated, then
// written half, then whole. A reader meanwhile finds it empty or half
// written for as long as the disk takes to sync.
func (g *geminiRecording) write(t *testing.T) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	doc := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	f, err := os.OpenFile(g.file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, part := range [][]byte{nil, doc[:len(doc)/2], doc[len(doc)/2:]} {
		if _, err := f.Write(part); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// rewriteUntil writes the recording again and again, each time with a new
// lastUpdated as Gemini CLI's later writes of a turn have, until done is
// closed.
func (g *geminiRecording) rewriteUntil(t *testing.T, done <-chan struct{}) {
	t.Helper()
	for {
		select {
		case <-done:
			return
		default:
		}
		g.LastUpdated = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		g.write(t)
		time.Sleep(2 * time.Millisecond) // the tool's pace, not a wait for anything
	}
}

// Gemini CLI's AfterAgent hook runs after each of 40 turns while Gemini
// CLI goes on rewriting its one-document recording whole (truncated,
// then written in two steps), and --watch follows the file meanwhile,
// its first pass too: every hook exits 0 with its turn stored, --watch
// reports no problem, and the session holds every message once, as one
// import of the finished file makes it.
func TestImportGeminiRewrittenWholeHooksAndWatch(t *testing.T) {
	t.Parallel()
	const turns = 40
	fx := clitest.NewEmptyFixture(t)
	rec := realGeminiRecording(t, fx.Home)
	key := "gemini:" + rec.SessionID
	rec.write(t)
	problems := &clitest.RaceProblems{}
	watch := fx.StartRaceWatch(t, "gemini", problems)
	rec.rewriteUntil(t, watch.Watching)

	// What each hook stored is read beside the processes.
	st, ctx := fx.OpenStore(t), t.Context()
	in, _ := json.Marshal(map[string]any{"session_id": rec.SessionID, "transcript_path": rec.file, "cwd": fx.Project, "hook_event_name": "AfterAgent"})
	for i := 1; i <= turns; i++ {
		rec.turn(t, i)
		hooked := make(chan struct{})
		go func() {
			defer close(hooked)
			r := fx.Exec(t, string(in), "session", "import", "--hook", "gemini")
			if r.Code != 0 {
				problems.Add(fmt.Sprintf("hook of turn %d: exit %d: %s", i, r.Code, r.Stderr))
				return
			}
			var msgs []*loom.Message
			s, err := st.Resolve(ctx, key, loom.ResolveScope{UserID: "local"})
			if err == nil {
				msgs, err = st.Messages(ctx, s.ID, loom.MessageQuery{})
			}
			if !slices.ContainsFunc(msgs, func(m *loom.Message) bool { return m.Text() == fmt.Sprintf("gemini reply %d", i) }) {
				problems.Add(fmt.Sprintf("the hook of turn %d exited 0, and the turn is not stored (%d messages, %v)", i, len(msgs), err))
			}
		}()
		// Gemini CLI writes the recording again while the hook reads it.
		rec.rewriteUntil(t, hooked)
		if i%8 == 0 {
			// The user takes as long to type the next prompt as --watch
			// waits for changes to go quiet, so that its next run may
			// start while the next turn is written.
			time.Sleep(100 * time.Millisecond)
		}
	}
	watch.Stop(t)
	problems.Check(t)

	msgs := fx.RaceSession(t, "gemini", key)
	var turnTexts, want []string
	for _, m := range msgs {
		if text := m.Text(); strings.HasPrefix(text, "gemini prompt ") || strings.HasPrefix(text, "gemini reply ") {
			turnTexts = append(turnTexts, text)
		}
	}
	for i := 1; i <= turns; i++ {
		want = append(want, fmt.Sprintf("gemini prompt %d", i), fmt.Sprintf("gemini reply %d", i))
	}
	if !slices.Equal(turnTexts, want) {
		t.Errorf("the session holds the turns\n%q\nwant\n%q", turnTexts, want)
	}

	// One import of the finished file stores the same messages.
	one := clitest.NewEmptyFixture(t)
	b, err := os.ReadFile(rec.file)
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(one.Home, strings.TrimPrefix(rec.file, fx.Home))
	os.MkdirAll(filepath.Dir(alone), 0o755)
	if err := os.WriteFile(alone, b, 0o644); err != nil {
		t.Fatal(err)
	}
	one.MustExec(t, "session", "import", "--from", "gemini")
	ids := func(ms []*loom.Message) (out []string) {
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	if got, want := ids(msgs), ids(one.ShowMessages(t, key)); !slices.Equal(got, want) {
		t.Errorf("the session holds the messages\n%q\none import of the finished file stores\n%q", got, want)
	}
}

// A one-document recording that stays cut short (Gemini CLI died in the
// middle of writing it) fails its hook in bounded time: once it has not
// changed for a few seconds, the hook exits 1 with one line that names
// the file and says what is wrong with it.
func TestImportGeminiCutShortHookFails(t *testing.T) {
	t.Parallel()
	clitest.LoomBinary(t) // built before the file is written, which is then fresh
	fx := clitest.NewEmptyFixture(t)
	file := filepath.Join(fx.Home, ".gemini", "tmp", "9da8b3df", "chats", "session-2026-04-23T12-52-0ab84937.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("{\n  \"sessionId\": \"0ab84937-9fe7-4284-986a-33c832af0b6a\",\n  \"messages\": [\n    {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"session_id": "0ab84937-9fe7-4284-986a-33c832af0b6a", "transcript_path": file, "cwd": fx.Project, "hook_event_name": "AfterAgent"})
	start := time.Now()
	r := fx.Exec(t, string(in), "session", "import", "--hook", "gemini")
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the hook took %s", took)
	}
	// ", still so after 3s" follows, unless the hook started 3s after the
	// file was written.
	want := file + ": not a Gemini CLI chat recording: its JSON ends early (unexpected EOF)"
	if r.Code != cli.ExitError || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, want) {
		t.Errorf("hook on a recording cut short: exit %d, stderr %q; want exit 1 and one line with %q", r.Code, r.Stderr, want)
	}
}
