package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/syncio"
	"github.com/loomhq/loom/openai/openaitest"
)

// serveLine is what loom serve prints first: its address and token.
var serveLine = regexp.MustCompile(`^loom serve: (http://\S+)/\?token=(\S+)$`)

// serveProc is a loom serve process.
type serveProc struct {
	cmd         *exec.Cmd
	base, token string
	stderr      *syncio.Buffer
}

// startServeProc runs loom serve on a free port. With host set it runs
// in a UTS namespace of its own under that host name, as if on another
// machine.
func startServeProc(t *testing.T, env []string, host string) *serveProc {
	t.Helper()
	bin := loomBinary(t)
	args := []string{"serve", "--addr", "127.0.0.1:0", "--grace", "1s"}
	cmd := exec.Command(bin, args...)
	if host != "" {
		cmd = exec.Command("unshare", append([]string{"--uts", "sh", "-c", `hostname "$0" && exec "$@"`, host, bin}, args...)...)
	}
	cmd.Env = env
	sp := &serveProc{cmd: cmd, stderr: &syncio.Buffer{}}
	cmd.Stderr = sp.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		first <- strings.TrimSpace(line)
		io.Copy(io.Discard, out)
	}()
	select {
	case line := <-first:
		m := serveLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("loom serve printed %q; stderr: %s", line, sp.stderr.String())
		}
		sp.base, sp.token = m[1], m[2]
	case <-time.After(20 * time.Second):
		t.Fatalf("loom serve did not start; stderr: %s", sp.stderr.String())
	}
	return sp
}

func (sp *serveProc) request(t *testing.T, method, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, sp.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+sp.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sseEvent is one Server-Sent Event.
type sseEvent struct{ name, data string }

// readEvents sends the events of an event stream to a channel, closed
// when the stream ends.
func readEvents(r io.ReadCloser) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return ch
}

// until returns the first event named name, failing on an error event
// or after 20 seconds.
func until(t *testing.T, ch <-chan sseEvent, name string) sseEvent {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before %q", name)
			}
			if ev.name == name {
				return ev
			}
			if ev.name == "error" {
				t.Fatalf("waiting for %q: error event %s", name, ev.data)
			}
		case <-timeout:
			t.Fatalf("no %q event within 20 s", name)
		}
	}
}

// turn posts a message and returns its status and, for 200, its events.
func (sp *serveProc) turn(t *testing.T, key, text string) (int, <-chan sseEvent, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"key": key, "text": text})
	resp := sp.request(t, "POST", "/api/v1/messages", string(body))
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil, string(b)
	}
	return resp.StatusCode, readEvents(resp.Body), ""
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
	fx := newEmptyFixture(t)
	db := fx.db
	if !onPostgres() {
		db = freshSchema(t)
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
	env := fx.binEnv("LOOM_DB="+db, "OPENAI_BASE_URL="+fake.BaseURL(), "OPENAI_API_KEY=test", "LOOM_MODEL=gpt-4o-mini")
	host := otherHostName()
	if host == "" {
		t.Log("unshare is not available: both servers run under this host name, so the killed one's lock is freed by its pid, not by expiry")
	}
	a := startServeProc(t, env, host)
	b := startServeProc(t, env, "")

	// A turn through a; b tails the session from the start.
	fake.Enqueue(openaitest.Reply{Text: "hello from the model"})
	code, evs, body := a.turn(t, "test:1", "hello")
	if code != http.StatusOK {
		t.Fatalf("first turn: %d %s", code, body)
	}
	var done struct {
		SessionID string `json:"session_id"`
	}
	json.Unmarshal([]byte(until(t, evs, "done").data), &done)
	resp := b.request(t, "GET", "/api/v1/sessions/"+done.SessionID+"/events?after=0", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("events on b: %d", resp.StatusCode)
	}
	live := readEvents(resp.Body)
	defer resp.Body.Close()
	seqOf := func(ev sseEvent) int64 {
		var m loom.Message
		json.Unmarshal([]byte(ev.data), &m)
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
	code, slow, body := a.turn(t, "test:1", "take your time")
	if code != http.StatusOK {
		t.Fatalf("second turn: %d %s", code, body)
	}
	until(t, slow, "text")
	if got := seqOf(until(t, live, "message")); got != 3 {
		t.Fatalf("b's live tail: seq %d, want 3", got)
	}
	if code, _, body := b.turn(t, "test:1", "me too"); code != http.StatusConflict || !strings.Contains(body, "locked") {
		t.Fatalf("turn on b while a holds the key: %d %s", code, body)
	}

	// Kill a: its lease outlives it until expiry (on another host), then
	// b takes the session over.
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cmd.Wait()
	killed := time.Now()
	fake.Enqueue(openaitest.Reply{Text: "b took over"})
	var took time.Duration
	for {
		code, evs, body := b.turn(t, "test:1", "are you there?")
		if code == http.StatusOK {
			took = time.Since(killed)
			ev := until(t, evs, "done")
			if !strings.Contains(ev.data, "b took over") {
				t.Fatalf("b's turn: %s", ev.data)
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
	resp = b.request(t, "GET", "/api/v1/sessions/"+done.SessionID+"/messages?limit=100", "")
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
