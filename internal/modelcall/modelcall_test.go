package modelcall

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loomhq/loom"
)

func TestRetries(t *testing.T) {
	for _, tt := range []struct{ configured, want int }{{0, 2}, {-1, 0}, {-5, 0}, {1, 1}, {4, 4}} {
		if got := Retries(tt.configured, 2); got != tt.want {
			t.Errorf("Retries(%d, 2) = %d, want %d", tt.configured, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("  a\n\tb  c \r\n"); got != "a b c" {
		t.Fatalf("OneLine = %q", got)
	}
	long := OneLine(strings.Repeat("é", 400))
	if !utf8.ValidString(long) || !strings.HasSuffix(long, "…") || len(long) > 300+len("…") {
		t.Fatalf("long text folded to %d bytes: %q", len(long), long)
	}
}

func TestFailed(t *testing.T) {
	cause := errors.New("sdk said\nso")
	err := Failed("p: 500 Internal Server Error", "line one\nline two", cause)
	if err.Error() != "p: 500 Internal Server Error: line one line two" || !errors.Is(err, cause) {
		t.Fatalf("%q wrapping %v", err, errors.Unwrap(err))
	}
	if err := Failed("p: stream", " \n", cause); err.Error() != "p: stream" {
		t.Fatalf("no detail: %q", err)
	}
}

func TestStreamEnd(t *testing.T) {
	classify := func(err error) error { return Failed("p", err.Error(), err) }
	live := context.Background()
	cancelled, cancel := context.WithCancel(live)
	cancel()
	boom := errors.New("boom")
	tests := []struct {
		ctx      context.Context
		err      error
		complete bool
		want     string
	}{
		{live, nil, true, ""},
		{cancelled, nil, true, ""},
		{cancelled, boom, false, context.Canceled.Error()},
		{cancelled, nil, false, context.Canceled.Error()},
		{live, boom, false, "p: boom"},
		{live, nil, false, "p: the response stream ended before the reply was complete"},
	}
	for i, tt := range tests {
		err := StreamEnd(tt.ctx, "p", tt.err, tt.complete, classify)
		if got := fmtErr(err); got != tt.want {
			t.Errorf("%d: %q, want %q", i, got, tt.want)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestInputJSON(t *testing.T) {
	for in, want := range map[string]string{"": "{}", "  ": "{}", ` {"a":1} `: `{"a":1}`, `{"a":`: `"{\"a\":"`} {
		if got := string(InputJSON(in)); got != want {
			t.Errorf("InputJSON(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestResults(t *testing.T) {
	call := loom.Part{Type: loom.PartTool, CallID: "c1", Status: loom.ToolPending}
	done := loom.Part{Type: loom.PartTool, CallID: "c1", Status: loom.ToolCompleted, Output: json.RawMessage(`"ok"`)}
	results := ResultsOf([]*loom.Message{{Role: loom.RoleTool, Parts: []loom.Part{done}}})
	if text, failed := Result(results.Answer(call)); text != "ok" || failed {
		t.Fatalf("answered call: %q %v", text, failed)
	}
	other := loom.Part{Type: loom.PartTool, CallID: "c2", Status: loom.ToolRunning}
	if text, failed := Result(results.Answer(other)); text != loom.Interrupted || !failed {
		t.Fatalf("unanswered call: %q %v", text, failed)
	}
	if text, failed := Result(loom.Part{Status: loom.ToolError}); text != "the tool failed" || !failed {
		t.Fatalf("failed call: %q %v", text, failed)
	}
	if got := loom.JSONText(json.RawMessage(`{"n":1}`)); got != `{"n":1}` {
		t.Fatalf("OutputText = %q", got)
	}
}

func TestReply(t *testing.T) {
	var events []loom.StreamEvent
	r := NewReply(func(e loom.StreamEvent) { events = append(events, e) })
	r.Add(loom.PartReasoning, "think ")
	r.Add(loom.PartReasoning, "more")
	r.Add(loom.PartText, "")
	r.Add(loom.PartText, "say")
	i := r.Start(loom.Part{Type: loom.PartTool, Name: "f"})
	r.AppendInput(i, `{"a"`)
	r.AppendInput(i, `:1}`)
	r.Start(loom.Part{Type: loom.PartTool, Name: "g"})
	parts := r.Parts()
	if len(parts) != 4 || parts[0].Text != "think more" || parts[1].Text != "say" ||
		string(parts[2].Input) != `{"a":1}` || string(parts[3].Input) != "{}" {
		t.Fatalf("parts %+v", parts)
	}
	if len(events) != 3 || events[0].Kind != loom.EventReasoning || events[2].Kind != loom.EventText {
		t.Fatalf("events %+v", events)
	}
}
