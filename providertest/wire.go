package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Events is a response of Server-Sent Events.
type Events struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	wait func() bool
}

// StartEvents answers with a stream of Server-Sent Events, each of which
// Send sends after waiting delay (unless the client goes away or the
// server closes first). Headers the protocol adds (a request id) must be
// set before.
func (x *Exchange[R]) StartEvents(delay time.Duration) *Events {
	w := x.w
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &Events{w: w, rc: http.NewResponseController(w), wait: func() bool { return x.wait(delay) }}
}

// Send waits the stream's delay, then sends v as the JSON data of an
// event named name (of no name when name is ""). It reports whether the
// client is still there.
func (e *Events) Send(name string, v any) bool {
	if !e.wait() {
		return false
	}
	data, _ := json.Marshal(v)
	return e.Raw(name, string(data))
}

// Raw sends data as it is, at once, in an event named name (of no name
// when name is ""). It reports whether the client is still there.
func (e *Events) Raw(name, data string) bool {
	event := "data: " + data + "\n\n"
	if name != "" {
		event = "event: " + name + "\n" + event
	}
	if _, err := fmt.Fprint(e.w, event); err != nil {
		return false
	}
	return e.rc.Flush() == nil
}

// WriteJSON answers with v as JSON, HTML characters unescaped as the
// services send them.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// SetRetryAfter sets the retry delay headers (retry-after-ms, and
// retry-after in whole seconds) that a failure of a retryable status
// (408, 409, 429, 5xx) carries; zero lets a client retry at once.
func SetRetryAfter(w http.ResponseWriter, status int, d time.Duration) {
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooManyRequests, status >= 500:
		ms := d.Milliseconds()
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(ms, 10))
		w.Header().Set("Retry-After", strconv.FormatInt((ms+999)/1000, 10))
	}
}

// Echo is the text of the reply when nothing is scripted: "echo: " and
// the last user message's text, "echo" when there is none. Both protocols
// send a message's content as a string or as an array of blocks, the text
// ones with type "text".
func Echo(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] != "user" {
			continue
		}
		if t := contentText(m["content"]); t != "" {
			return "echo: " + t
		}
	}
	return "echo"
}

func contentText(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if p, ok := p.(map[string]any); ok && p["type"] == "text" {
				t, _ := p["text"].(string)
				b.WriteString(t)
			}
		}
		return b.String()
	}
	return ""
}

// PromptTokens is the prompt size a reply reports when none is scripted:
// about a token for every four bytes of the request.
func PromptTokens(req Request) int64 { return int64(len(req.Raw)/4 + 1) }

// OutputTokens is the reply size a reply reports when none is scripted:
// a token for every streamed piece.
func OutputTokens(reasoning, text string, calls []ToolCall) int64 {
	out := len(Chunks(reasoning)) + len(Chunks(text))
	for _, tc := range calls {
		out += 1 + len(Pieces(tc.Args))
	}
	return int64(out)
}

// Chunks splits text into words, each with the spaces that follow it, as
// a model streams tokens.
func Chunks(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexAny(s, " \n")
		if i < 0 {
			out = append(out, s)
			break
		}
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\n') {
			j++
		}
		out = append(out, s[:j])
		s = s[j:]
	}
	return out
}

// Pieces splits a tool call's arguments into short fragments that cut
// through JSON tokens, as the real services stream them.
func Pieces(s string) []string {
	const n = 7
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
