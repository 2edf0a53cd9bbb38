package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
)

// Conversations opens the conversation a turn runs in: the session a
// key names, locked, with its agent built. *agent.Service is the one
// loom serve uses; it decides which session a key names, repairs what a
// dead process left and writes the replay log's session events, for this
// edge as for the command line.
type Conversations interface {
	Open(ctx context.Context, spec agent.Spec) (*agent.Conversation, error)
}

// Events of POST /api/v1/messages.
const (
	evStart     = "start"
	evText      = "text"
	evReasoning = "reasoning"
	evToolStart = "tool_start"
	evToolEnd   = "tool_end"
	evCompacted = "compacted"
	evDone      = "done"
	evError     = "error"
)

// turnEvent is the data of a streamed agent event.
type turnEvent struct {
	SessionID  string          `json:"session_id"`
	Text       string          `json:"text,omitempty"`
	Tool       string          `json:"tool,omitempty"`
	CallID     string          `json:"call_id,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     string          `json:"output,omitempty"`
	Status     string          `json:"status,omitempty"`
	Error      string          `json:"error,omitempty"`
	DurationMS *int64          `json:"duration_ms,omitempty"`
}

// turnDone is the data of the done event: the stored assistant messages.
type turnDone struct {
	SessionID string          `json:"session_id"`
	Key       string          `json:"key"`
	Text      string          `json:"text"`
	Messages  []*loom.Message `json:"messages"`
	Usage     loom.Usage      `json:"usage"`
}

// postMessage is POST /api/v1/messages: one agent turn in the session
// with the given key, created lazily, streamed back as Server-Sent
// Events. Like the command line, it holds the session's lock for the
// turn; a second turn on the same key while one runs is refused with 409.
// A user may run Config.MaxTurnsPerUser turns at once, the server
// Config.MaxTurns.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	user := userOf(r)
	var in struct {
		Key  string `json:"key"`
		Text string `json:"text"`
	}
	if err := s.decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	in.Key = strings.TrimSpace(in.Key)
	if err := loom.ValidKey(in.Key); err != nil {
		s.writeError(w, r, err)
		return
	}
	if strings.TrimSpace(in.Text) == "" {
		s.writeError(w, r, loom.Errorf(loom.EINVALID, "text is required"))
		return
	}
	if s.cfg.Agent == nil {
		s.writeError(w, r, codedError(eUnavailable, "this server runs no agent"))
		return
	}
	release, err := s.turnLimit.acquire(user)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer release()
	ok, draining := s.beginTurn(user, in.Key)
	if draining {
		s.writeError(w, r, codedError(eUnavailable, "the server is shutting down"))
		return
	}
	if !ok {
		s.writeError(w, r, loom.Errorf(loom.ELOCKED, "a turn is already running in the session with key %q", in.Key))
		return
	}
	events, x, res, err := s.runTurn(w, r, user, in.Key, in.Text)
	// The key, the lock and the user's place among the turns are free
	// before the last event, so a client may send its next message as
	// soon as it reads it.
	s.endTurn(user, in.Key)
	release()
	if events == nil {
		if err != nil {
			s.writeError(w, r, err)
		}
		return
	}
	if err != nil {
		d := detailOf(err)
		if d.Code == loom.ENOSPACE {
			s.log.Error("turn failed: out of disk space", "session", x.ID, "err", causeOf(err))
		}
		if d.Code == loom.EINTERNAL {
			s.log.Error("turn failed", "session", x.ID, "err", err)
			if agent.IsCancelled(err) {
				d.Message = "the turn was cut short: the server is shutting down"
			} else {
				// Provider errors say what went wrong and hold no secrets.
				d.Message = loom.ErrorMessage(err)
			}
		}
		events.send(evError, "", struct {
			errorBody
			SessionID string `json:"session_id"`
		}{errorBody{Error: d}, x.ID})
		return
	}
	msgs := res.Messages
	if msgs == nil {
		msgs = []*loom.Message{}
	}
	events.send(evDone, "", turnDone{SessionID: x.ID, Key: in.Key, Text: res.Text, Messages: msgs, Usage: res.Usage})
}

// runTurn opens the conversation (the session, its lock and agent) and
// runs the turn, streaming its events. It returns a nil stream
// when it failed before streaming began (err is then for a plain JSON
// answer). The lock is released when it returns.
func (s *Server) runTurn(w http.ResponseWriter, r *http.Request, user, key, text string) (*stream, *loom.Session, *agent.Result, error) {
	ctx := r.Context()
	conv, err := s.cfg.Agent.Open(ctx, agent.Spec{UserID: user, Key: key})
	if agent.IsUnavailable(err) {
		s.log.Warn("no agent for a turn", "err", err)
		return nil, nil, nil, codedError(eUnavailable, "the agent is not available: %s", loom.ErrorMessage(err))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	defer conv.Close(ctx)
	// The fork that continues an imported session is made by this turn.
	x, created := conv.Session(), !conv.Resumed() || conv.Pending()

	events := startStream(w)
	events.send(evStart, "", map[string]any{"session_id": x.ID, "key": key, "created": created})
	emit := func(e agent.Event) {
		if e.Kind == agent.EventStored {
			// The done or error event names the session the turn is in.
			return
		}
		ev := turnEvent{SessionID: e.SessionID, Text: e.Text, Tool: e.Tool, CallID: e.CallID, Status: e.Status, Output: e.Output}
		if ev.SessionID == "" {
			ev.SessionID = x.ID
		}
		name := e.Kind
		switch e.Kind {
		case loom.EventText:
			name = evText
		case loom.EventReasoning:
			name = evReasoning
		case agent.EventToolStart:
			name = evToolStart
			if e.Input != "" && json.Valid([]byte(e.Input)) {
				ev.Input = json.RawMessage(e.Input)
			}
		case agent.EventToolEnd:
			name = evToolEnd
			ev.Error, ev.Text = e.Text, ""
			ms := e.Duration.Milliseconds()
			ev.DurationMS = &ms
		case agent.EventCompacted:
			name = evCompacted
		}
		// A client that went away misses the rest; the turn goes on and
		// its messages are stored.
		events.send(name, "", ev)
	}
	// The turn runs on the server's context, not the request's: see
	// Server.turnCtx.
	tctx, cancel := context.WithCancel(s.turnCtx)
	defer cancel()
	res, err := conv.Turn(tctx, text, emit)
	// The turn may have gone on in a session another process created
	// with the key meanwhile.
	return events, conv.Session(), res, err
}
