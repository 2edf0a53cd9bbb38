package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

func testName(t *testing.T, s Suite) {
	if got := s.New(Config{}).Name(); got != s.Name {
		t.Fatalf("Name() = %q, want %q", got, s.Name)
	}
}

func testStreamText(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	const text = "Hello there, this reply arrives in pieces."
	f.Script(Script{Text: text, Model: s.Model + "-snapshot"})

	var rec Recorder
	resp, err := p.Stream(context.Background(), s.request("hi"), rec.On)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) < 5 {
		t.Fatalf("got %d events, want the text in several pieces: %+v", len(rec.Events), rec.Events)
	}
	for _, e := range rec.Events {
		if e.Kind != loom.EventText {
			t.Fatalf("unexpected event kind %q", e.Kind)
		}
	}
	if got := rec.Text(loom.EventText); got != text {
		t.Fatalf("streamed %q, want %q", got, text)
	}
	if want := []loom.Part{{Type: loom.PartText, Text: text}}; !reflect.DeepEqual(resp.Parts, want) {
		t.Fatalf("parts = %+v, want %+v", resp.Parts, want)
	}
	if resp.Model != s.Model+"-snapshot" || resp.StopReason != s.StopReason {
		t.Fatalf("model %q stop %q", resp.Model, resp.StopReason)
	}
	if resp.Usage.APICalls != 1 || resp.Usage.OutputTokens == 0 {
		t.Fatalf("usage = %+v", resp.Usage)
	}
	if n := len(f.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

func testDelayedChunks(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	f.Script(Script{Text: "one two three", Delay: 30 * time.Millisecond})
	var times []time.Time
	resp, err := p.Stream(context.Background(), s.request("hi"), func(e loom.StreamEvent) {
		if e.Kind != loom.EventProgress {
			times = append(times, time.Now())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Parts[0].Text != "one two three" || len(times) != 3 {
		t.Fatalf("parts %+v, %d events", resp.Parts, len(times))
	}
	// Events arrive as chunks do, not all at the end.
	if d := times[2].Sub(times[0]); d < 40*time.Millisecond {
		t.Fatalf("events were not streamed: %v apart", d)
	}
}

func testReasoningFirst(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	const thought = "The user wants a number. Forty-two fits."
	f.Script(Script{Reasoning: thought, Text: "The answer is 42."})
	req := s.request("a number?")
	req.Thinking = true
	req.MaxTokens = 4000

	var rec Recorder
	resp, err := p.Stream(context.Background(), req, rec.On)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Text(loom.EventReasoning); got != thought {
		t.Fatalf("reasoning events %q", got)
	}
	if rec.Events[0].Kind != loom.EventReasoning || rec.Events[len(rec.Events)-1].Kind != loom.EventText {
		t.Fatalf("events out of order: %+v", rec.Events)
	}
	if len(resp.Parts) != 2 || resp.Parts[0].Type != loom.PartReasoning || resp.Parts[0].Text != thought ||
		resp.Parts[1].Type != loom.PartText || resp.Parts[1].Text != "The answer is 42." {
		t.Fatalf("parts = %+v", resp.Parts)
	}
}

// A reply that is one long tool call has no text to show, but what
// arrives is still told, as it arrives: a caller watching for a silent
// stream must not take it for one.
func testProgressWithoutText(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	args := `{"query":"` + strings.Repeat("a long query ", 8) + `"}`
	const delay = 20 * time.Millisecond
	f.Script(Script{ToolCalls: []ToolCall{{ID: "call_q", Name: "session_search", Args: args}}, Delay: delay})
	req := s.request("search")
	req.Tools = []loom.ToolSpec{{Name: "session_search", Schema: json.RawMessage(`{"type":"object"}`)}}
	var rec Recorder
	resp, err := p.Stream(context.Background(), req, rec.On)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Parts) != 1 || string(resp.Parts[0].Input) != args || len(rec.Events) != 0 {
		t.Fatalf("parts %+v, events %+v", resp.Parts, rec.Events)
	}
	pieces := len(Pieces(args))
	if n := len(rec.Progress); n < 2 {
		t.Fatalf("%d progress events over %d pieces of a tool call", n, pieces)
	}
	if d := rec.Progress[len(rec.Progress)-1].Sub(rec.Progress[0]); d < time.Duration(pieces)*delay/2 {
		t.Fatalf("progress was told over %v of a stream of %d pieces %v apart", d, pieces, delay)
	}
}

func testToolCalls(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	f.Script(Script{
		Text: "Let me check.",
		ToolCalls: []ToolCall{
			{ID: "call_a", Name: "read_file", Args: `{"path":"go.mod","start":1}`},
			{Name: "session_search", Args: `{"query":"sqlite wal","limit":3}`},
			{ID: "call_c", Name: "memory"},
		},
	})
	req := s.request("look around")
	req.Tools = []loom.ToolSpec{
		{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "session_search", Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
		{Name: "memory"},
	}
	resp, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Parts) != 4 || resp.Parts[0].Type != loom.PartText || resp.Parts[0].Text != "Let me check." {
		t.Fatalf("parts = %+v", resp.Parts)
	}
	want := []struct{ id, name, input string }{
		{"call_a", "read_file", `{"path":"go.mod","start":1}`},
		{"", "session_search", `{"query":"sqlite wal","limit":3}`},
		{"call_c", "memory", `{}`},
	}
	for i, w := range want {
		got := resp.Parts[i+1]
		if got.Type != loom.PartTool || got.Status != loom.ToolPending || got.Name != w.name || string(got.Input) != w.input {
			t.Errorf("tool part %d = %+v (input %s), want %s %s", i, got, got.Input, w.name, w.input)
		}
		if w.id != "" && got.CallID != w.id || got.CallID == "" {
			t.Errorf("tool part %d call id %q, want %q", i, got.CallID, w.id)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("tool part %d: %v", i, err)
		}
	}
	if len(f.Requests()[0].Body["tools"].([]any)) != 3 {
		t.Fatalf("tools sent: %s", f.Requests()[0].Raw)
	}

	// Complete the calls and continue: the fake server refuses a call
	// that is not answered, or an answer to no call.
	asst := &loom.Message{Role: loom.RoleAssistant, Parts: resp.Parts}
	for i := 1; i < 4; i++ {
		asst.Parts[i].Status = loom.ToolCompleted
		asst.Parts[i].Output = json.RawMessage(`"done"`)
	}
	req.Messages = append(req.Messages, asst)
	f.Script(Script{Text: "All done."})
	resp, err = p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Parts[len(resp.Parts)-1].Text != "All done." {
		t.Fatalf("parts %+v", resp.Parts)
	}
}

func testBrokenStreams(t *testing.T, s Suite) {
	tests := []struct {
		reply Script
		want  string
	}{
		{Script{Text: "cut short", Truncate: true}, s.Name + ": the response stream ended before the reply was complete"},
		{Script{Text: "so far", StreamError: "The model is\noverloaded."}, s.StreamError("The model is overloaded.")},
	}
	for _, tt := range tests {
		p, f := s.start(t, 0)
		f.Script(tt.reply)
		var rec Recorder
		resp, err := p.Stream(context.Background(), s.request("hi"), rec.On)
		if resp != nil || err == nil || err.Error() != tt.want {
			t.Errorf("got %+v, %v; want error %q", resp, err, tt.want)
		}
		if got := rec.Text(loom.EventText); got != tt.reply.Text {
			t.Errorf("streamed %q before the failure", got)
		}
	}
}

func testCancelBeforeCall(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, err := p.Stream(ctx, s.request("hi"), nil)
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want no response and context.Canceled", resp, err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("%d requests made with a cancelled context", n)
	}
}

func testCancelDuringHangingStream(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	f.Script(Script{Text: "partial answer", Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var got strings.Builder
	var canceledAt time.Time
	resp, err := p.Stream(ctx, s.request("hi"), func(e loom.StreamEvent) {
		got.WriteString(e.Text)
		if got.String() == "partial answer" {
			canceledAt = time.Now()
			cancel()
		}
	})
	if canceledAt.IsZero() {
		t.Fatalf("streamed %q before hanging, want the partial text", got.String())
	}
	if d := time.Since(canceledAt); d > 2*time.Second {
		t.Fatalf("returned %v after cancellation", d)
	}
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want no response and context.Canceled", resp, err)
	}
}

func testDeadlineDuringHangingStream(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	f.Script(Script{Text: "partial", Hang: true})
	s.streamPastDeadline(t, p)
}

func testCancelWhileWaitingToRetry(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	f.Script(Script{Status: http.StatusServiceUnavailable, RetryAfter: 5 * time.Second}, Script{Text: "too late"})
	s.streamPastDeadline(t, p)
	if n := len(f.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

// streamPastDeadline streams a reply that will not come in time and
// fails the test unless the call gives up at its deadline, with no
// response and context.DeadlineExceeded.
func (s Suite) streamPastDeadline(t *testing.T, p loom.Provider) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	resp, err := p.Stream(ctx, s.request("hi"), nil)
	if resp != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %+v, %v; want no response and context.DeadlineExceeded", resp, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("returned %v after the call began, long past its deadline", d)
	}
}
