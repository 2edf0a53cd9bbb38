package serve_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// until returns the first event named name, failing on an error event
// or after 20 seconds.
func until(t *testing.T, ch <-chan clitest.SSEEvent, name string) clitest.SSEEvent {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before %q", name)
			}
			if ev.Name == name {
				return ev
			}
			if ev.Name == "error" {
				t.Fatalf("waiting for %q: error event %s", name, ev.Data)
			}
		case <-timeout:
			t.Fatalf("no %q event within 20 s", name)
		}
	}
}

// otherHostName returns a host name to run a process under as if on
// another machine, "" when this system cannot (unshare needs root).
func otherHostName() string {
	if err := exec.Command("unshare", "--uts", "sh", "-c", "hostname loom-test-other").Run(); err != nil {
		return ""
	}
	return "loom-test-other"
}

// Two loom serve processes on one PostgreSQL database: what one writes
// the other reads live; a turn on a key one of them holds is 409 on the
// other; when the holder is killed, its lease binds until it expires and
// the other then takes the session over.
func TestTwoServersOnePostgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs two loom serve processes and waits for a lease to expire")
	}
	fx := clitest.NewEmptyFixture(t)
	db := fx.DB
	if !clitest.OnPostgres() {
		db = clitest.FreshSchema(t)
	}
	// A short lease, so that the killed server's expires in seconds.
	const leaseTTL = 3 * time.Second
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("lease_ttl", leaseTTL.String())
	u.RawQuery = q.Encode()
	db = u.String()
	fake := openaitest.NewServer()
	defer fake.Close()
	env := fx.BinEnv("LOOM_DB="+db, "OPENAI_BASE_URL="+fake.BaseURL(), "OPENAI_API_KEY=test", "LOOM_MODEL=gpt-4o-mini")
	host := otherHostName()
	if host == "" {
		t.Log("unshare is not available: both servers run under this host name, so the killed one's lock is freed by its pid, not by expiry")
	}
	a := clitest.StartServeProc(t, env, host)
	b := clitest.StartServeProc(t, env, "")

	// A turn through a; b tails the session from the start.
	fake.Enqueue(openaitest.Reply{Text: "hello from the model"})
	code, evs, body := a.Turn(t, "test:1", "hello")
	if code != http.StatusOK {
		t.Fatalf("first turn: %d %s", code, body)
	}
	var done struct {
		SessionID string `json:"session_id"`
	}
	json.Unmarshal([]byte(until(t, evs, "done").Data), &done)
	resp := b.Request(t, "GET", "/api/v1/sessions/"+done.SessionID+"/events?after=0", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("events on b: %d", resp.StatusCode)
	}
	live := clitest.ReadEvents(resp.Body)
	defer resp.Body.Close()
	seqOf := func(ev clitest.SSEEvent) int64 {
		var m loom.Message
		json.Unmarshal([]byte(ev.Data), &m)
		return m.Seq
	}
	for want := int64(1); want <= 2; want++ {
		if got := seqOf(until(t, live, "message")); got != want {
			t.Fatalf("b's live tail: seq %d, want %d", got, want)
		}
	}

	// A turn through a that hangs mid-stream: b sees its user message
	// live, and refuses a turn on the same key.
	fake.Enqueue(openaitest.Reply{Text: "thinking about it", Hang: true})
	code, slow, body := a.Turn(t, "test:1", "take your time")
	if code != http.StatusOK {
		t.Fatalf("second turn: %d %s", code, body)
	}
	until(t, slow, "text")
	if got := seqOf(until(t, live, "message")); got != 3 {
		t.Fatalf("b's live tail: seq %d, want 3", got)
	}
	if code, _, body := b.Turn(t, "test:1", "me too"); code != http.StatusConflict || !strings.Contains(body, "locked") {
		t.Fatalf("turn on b while a holds the key: %d %s", code, body)
	}

	// Kill a: its lease outlives it until expiry (on another host), then
	// b takes the session over.
	a.Cmd.Process.Signal(syscall.SIGKILL)
	a.Cmd.Wait()
	killed := time.Now()
	fake.Enqueue(openaitest.Reply{Text: "b took over"})
	var took time.Duration
	for {
		code, evs, body := b.Turn(t, "test:1", "are you there?")
		if code == http.StatusOK {
			took = time.Since(killed)
			ev := until(t, evs, "done")
			if !strings.Contains(ev.Data, "b took over") {
				t.Fatalf("b's turn: %s", ev.Data)
			}
			break
		}
		if code != http.StatusConflict {
			t.Fatalf("turn on b after the kill: %d %s", code, body)
		}
		if host == "" {
			t.Fatalf("the dead holder's lock on this host still binds: %s", body)
		}
		if time.Since(killed) > leaseTTL+10*time.Second {
			t.Fatalf("the lease of the killed server never expired: %s", body)
		}
		time.Sleep(time.Second)
	}
	if host != "" && took < time.Second {
		t.Fatalf("b took the session over %v after the kill, before the lease expired", took)
	}
	t.Logf("b took over %.1f s after the kill", took.Seconds())

	// The session is whole: the killed turn left its user message and
	// nothing partial, b's turn follows, seq has no gap.
	resp = b.Request(t, "GET", "/api/v1/sessions/"+done.SessionID+"/messages?limit=100", "")
	var page struct {
		Messages []*loom.Message `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var got []string
	for i, m := range page.Messages {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d", i+1, m.Seq)
		}
		got = append(got, m.Role+": "+m.Text())
	}
	want := []string{"user: hello", "assistant: hello from the model", "user: take your time", "user: are you there?", "assistant: b took over"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the session holds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
