package chat_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// runWithin runs cmd like execCmd, but kills it and fails the test when
// it has not ended after limit: a turn that hangs must not hang the test.
func runWithin(t *testing.T, cmd *exec.Cmd, limit time.Duration) (clitest.Result, time.Duration) {
	t.Helper()
	start := time.Now()
	cmd.WaitDelay = time.Second
	timer := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	defer timer.Stop()
	r := clitest.ExecCmd(t, cmd, "")
	took := time.Since(start)
	if took >= limit {
		t.Fatalf("loom %s still ran after %v: killed\nstdout: %s\nstderr: %s", strings.Join(cmd.Args[1:], " "), limit, r.Stdout, r.Stderr)
	}
	return r, took
}

// errorLine is the error a failed command reported: its last line of
// stderr, which must be the only one that starts "loom: ".
func errorLine(t *testing.T, stderr string) string {
	t.Helper()
	ls := clitest.Lines(stderr)
	if len(ls) == 0 || !strings.HasPrefix(ls[len(ls)-1], "loom: ") || strings.Count(stderr, "loom: ") != 1 {
		t.Fatalf("stderr, want one error line at the end:\n%s", stderr)
	}
	return ls[len(ls)-1]
}

// storedMessages reads every message of session id.
func storedMessages(t *testing.T, fx *clitest.Fixture, id string) []*loom.Message {
	t.Helper()
	msgs, err := fx.OpenStore(t).Messages(t.Context(), id, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// A provider that sends part of a reply and then nothing fails the turn
// after stream_idle_timeout, with either provider: exit 1 and one line
// naming the limit, the user message kept, nothing partial stored, and
// the session free for the next run.
func TestRunStalledStreamTimesOut(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			fx := clitest.NewAgentFixture(t)
			fx.Env = append(fx.Env, "LOOM_STREAM_IDLE_TIMEOUT=300ms")
			if provider == "anthropic" {
				an := anthropictest.NewServer()
				t.Cleanup(an.Close)
				an.Enqueue(anthropictest.Reply{Text: "PARTIAL words, then silence", Hang: true}, anthropictest.Reply{Text: "back again"})
				fx.Env = append(fx.Env, "LOOM_PROVIDER=anthropic", "ANTHROPIC_BASE_URL="+an.URL, "ANTHROPIC_API_KEY=test-key", "LOOM_MODEL=claude-sonnet-4-5")
			} else {
				fx.Srv.Enqueue(openaitest.Reply{Text: "PARTIAL words, then silence", Hang: true}, openaitest.Reply{Text: "back again"})
			}
			r, took := runWithin(t, fx.Cmd(t, "run", "are you there?"), 20*time.Second)
			if r.Code != cli.ExitError || took > 10*time.Second {
				t.Fatalf("exit %d after %v, want %d promptly\nstderr: %s", r.Code, took, cli.ExitError, r.Stderr)
			}
			if errLine := errorLine(t, r.Stderr); !strings.Contains(errLine, "stream_idle_timeout") || !strings.Contains(errLine, "300ms") {
				t.Fatalf("the error does not name the limit:\n%s", r.Stderr)
			}
			id := clitest.SessionOf(t, r.Stderr)
			msgs := storedMessages(t, fx.Fixture, id)
			if len(msgs) != 1 || msgs[0].Role != loom.RoleUser || msgs[0].Text() != "are you there?" {
				t.Fatalf("after the stall the session holds %d messages: %+v", len(msgs), msgs)
			}
			r = fx.MustLoom(t, "", "run", "--resume", id, "try again")
			if strings.TrimSpace(r.Stdout) != "back again" {
				t.Fatalf("the next run printed %q", r.Stdout)
			}
			msgs = storedMessages(t, fx.Fixture, id)
			if len(msgs) != 3 || msgs[1].Text() != "try again" || msgs[2].Text() != "back again" {
				t.Fatalf("after the next run the session holds %+v", msgs)
			}
			for _, m := range msgs {
				if strings.Contains(m.Text(), "PARTIAL") {
					t.Fatalf("the partial reply was stored: %+v", m)
				}
			}
		})
	}
}

// A reply that keeps streaming but never ends fails the turn after
// turn_timeout, though the stream is never silent.
func TestRunTurnTimeout(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Env = append(fx.Env, "LOOM_TURN_TIMEOUT=1s")
	fx.Srv.Enqueue(openaitest.Reply{Text: strings.Repeat("word ", 400), Delay: 50 * time.Millisecond})
	r, took := runWithin(t, fx.Cmd(t, "run", "talk for a long time"), 20*time.Second)
	if r.Code != cli.ExitError || took > 10*time.Second {
		t.Fatalf("exit %d after %v, want %d promptly\nstderr: %s", r.Code, took, cli.ExitError, r.Stderr)
	}
	if errLine := errorLine(t, r.Stderr); !strings.Contains(errLine, "turn_timeout") || !strings.Contains(errLine, "1s") {
		t.Fatalf("stderr: %s", r.Stderr)
	}
	msgs := storedMessages(t, fx.Fixture, clitest.SessionOf(t, r.Stderr))
	if len(msgs) != 1 || msgs[0].Role != loom.RoleUser {
		t.Fatalf("after the timeout the session holds %+v", msgs)
	}
}

// On the server, a stalled provider fails the turn with an error event
// after stream_idle_timeout, and the key is free for the next message
// at once (not 409 until the process ends).
func TestServeStalledStreamFreesKey(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	fake := openaitest.NewServer()
	defer fake.Close()
	fake.Enqueue(openaitest.Reply{Text: "PARTIAL", Hang: true}, openaitest.Reply{Text: "answered"})
	sv := clitest.StartServe(t, fx, map[string]string{"OPENAI_BASE_URL": fake.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini",
		"LOOM_STREAM_IDLE_TIMEOUT": "300ms"}, "")
	client := &http.Client{Timeout: 15 * time.Second}
	post := func(text string) (int, string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"key": "telegram:7", "text": text})
		req, _ := http.NewRequest("POST", sv.Base+"/api/v1/messages", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+sv.Token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("turn: %v", err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("turn: %v (read %q)", err, b)
		}
		return resp.StatusCode, string(b)
	}
	code, body := post("hello?")
	if code != 200 || !strings.Contains(body, "event: error") || !strings.Contains(body, "stream_idle_timeout") || strings.Contains(body, "event: done") {
		t.Fatalf("stalled turn: %d %s", code, body)
	}
	code, body = post("hello again")
	if code != 200 || !strings.Contains(body, "event: done") || !strings.Contains(body, "answered") {
		t.Fatalf("the next turn on the key: %d %s", code, body)
	}
}
