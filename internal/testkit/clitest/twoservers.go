package clitest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/syncio"
)

// serveLine is what loom serve prints first: its address and token.
var serveLine = regexp.MustCompile(`^loom serve: (http://\S+)/\?token=(\S+)$`)

// ServeProc is a loom serve process.
type ServeProc struct {
	Cmd         *exec.Cmd
	Base, Token string
	Stderr      *syncio.Buffer
}

// StartServeProc runs loom serve on a free port. With host set it runs
// in a UTS namespace of its own under that host name, as if on another
// machine.
func StartServeProc(t *testing.T, env []string, host string) *ServeProc {
	t.Helper()
	return StartServeProcArgs(t, env, host)
}

// StartServeProcArgs is StartServeProc with more arguments of loom
// serve (--team NAME).
func StartServeProcArgs(t *testing.T, env []string, host string, more ...string) *ServeProc {
	t.Helper()
	bin := LoomBinary(t)
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--grace", "1s"}, more...)
	cmd := exec.Command(bin, args...)
	if host != "" {
		cmd = exec.Command("unshare", append([]string{"--uts", "sh", "-c", `hostname "$0" && exec "$@"`, host, bin}, args...)...)
	}
	cmd.Env = env
	sp := &ServeProc{Cmd: cmd, Stderr: &syncio.Buffer{}}
	cmd.Stderr = sp.Stderr
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
			t.Fatalf("loom serve printed %q; stderr: %s", line, sp.Stderr.String())
		}
		sp.Base, sp.Token = m[1], m[2]
	case <-time.After(20 * time.Second):
		t.Fatalf("loom serve did not start; stderr: %s", sp.Stderr.String())
	}
	return sp
}

func (sp *ServeProc) Request(t *testing.T, method, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, sp.Base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+sp.Token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// SSEEvent is one Server-Sent Event.
type SSEEvent struct{ Name, Data string }

// ReadEvents sends the events of an event stream to a channel, closed
// when the stream ends.
func ReadEvents(r io.ReadCloser) <-chan SSEEvent {
	ch := make(chan SSEEvent, 64)
	go func() {
		defer close(ch)
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev SSEEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Name != "" {
					ch <- ev
				}
				ev = SSEEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return ch
}

// Turn posts a message and returns its status and, for 200, its events.
func (sp *ServeProc) Turn(t *testing.T, key, text string) (int, <-chan SSEEvent, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"key": key, "text": text})
	resp := sp.Request(t, "POST", "/api/v1/messages", string(body))
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil, string(b)
	}
	return resp.StatusCode, ReadEvents(resp.Body), ""
}
