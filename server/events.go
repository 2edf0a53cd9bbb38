package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
)

// stream writes Server-Sent Events. Each event's data is one line of
// JSON. It is safe for concurrent use; after a failed write (the client
// went away) it drops everything.
type stream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	broken bool
}

// startStream sends the headers of an event stream and lifts the
// connection's deadlines: a stream lasts as long as it has to.
func startStream(w http.ResponseWriter) *stream {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{})
	rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: rc}
	st.write([]byte("retry: 2000\n\n"))
	return st
}

// send writes one event with an optional id.
func (st *stream) send(event, id string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if id != "" {
		buf.WriteString("id: " + id + "\n")
	}
	buf.WriteString("event: " + event + "\n")
	buf.WriteString("data: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	return st.write(buf.Bytes())
}

// comment writes a comment line, which clients ignore: a keep-alive.
func (st *stream) comment(text string) error {
	return st.write([]byte(": " + text + "\n\n"))
}

func (st *stream) write(b []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.broken {
		return http.ErrHandlerTimeout
	}
	if _, err := st.w.Write(b); err != nil {
		st.broken = true
		return err
	}
	if err := st.rc.Flush(); err != nil {
		st.broken = true
		return err
	}
	return nil
}

// tailBatch is how many messages one poll of a live tail reads at most.
const tailBatch = 100

// sessionEvents is GET /api/v1/sessions/{id}/events: a live tail of the
// session's messages. Each message is an event "message" whose id is its
// seq. It starts after the Last-Event-ID a reconnecting client sends,
// else after the after parameter, else at the end (only new messages).
// A message whose tool parts were still pending or running is sent again
// (same id) when they change, so a viewer sees tools finish. A user may
// have Config.MaxStreamsPerUser streams open, the server
// Config.MaxStreams; each read of the store is bounded by the request
// timeout, the stream itself is not.
func (s *Server) sessionEvents(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	after := q.seq("after")
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	if v := strings.TrimSpace(r.Header.Get("Last-Event-ID")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			s.writeError(w, r, loom.Errorf(loom.EINVALID, "Last-Event-ID must be a message seq"))
			return
		}
		after = n
	} else if q.str("after") == "" {
		after = -1 // from the end
	}
	ctx := r.Context()
	x, after, err := s.streamStart(r, after)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	release, err := s.streams.acquire(userOf(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer release()
	st := startStream(w)
	st.send("ready", "", map[string]any{"session_id": x.ID, "after": after})

	// open holds the messages sent with tool parts not yet finished, by
	// seq, with the JSON they were sent as.
	open := map[int64][]byte{}
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	keep := time.NewTicker(s.cfg.KeepAlive)
	defer keep.Stop()
	for {
		if err := s.tailOnce(r, x.ID, &after, open, st); err != nil {
			if loom.ErrorCode(err) == loom.ENOTFOUND || ctx.Err() != nil {
				return
			}
			s.log.Error("live tail failed", "session", x.ID, "err", err)
			st.send("error", "", errorBody{Error: detailOf(err)})
			return
		}
		if !s.nextPoll(ctx, st, poll, keep) {
			return
		}
	}
}

// nextPoll waits for a stream's next poll, keeping the connection alive
// meanwhile; it reports false when the stream is over: the client left,
// the server is closing (the client is told), or a keep-alive failed.
func (s *Server) nextPoll(ctx context.Context, st *stream, poll, keep *time.Ticker) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-s.closing:
			st.send("shutdown", "", map[string]string{"message": "the server is shutting down"})
			return false
		case <-keep.C:
			if st.comment("keep-alive") != nil {
				return false
			}
		case <-poll.C:
			return true
		}
	}
}

// streamStart finds the session a stream follows and, for after -1, the
// seq it starts after (the last one), within the request timeout.
func (s *Server) streamStart(r *http.Request, after int64) (*loom.Session, int64, error) {
	ctx, cancel := s.bounded(r.Context())
	defer cancel()
	x, err := s.session(ctx, userOf(r), r.PathValue("id"))
	if err != nil {
		return nil, 0, s.timedOutIn(ctx, err)
	}
	if after < 0 {
		last, err := s.st.Messages(ctx, x.ID, loom.MessageQuery{Limit: 1})
		if err != nil {
			return nil, 0, s.timedOutIn(ctx, err)
		}
		after = 0
		if len(last) > 0 {
			after = last[0].Seq
		}
	}
	return x, after, nil
}

// tailOnce sends the messages after *after (advancing it) and the open
// messages that changed, its reads bounded by the request timeout.
func (s *Server) tailOnce(r *http.Request, sessionID string, after *int64, open map[int64][]byte, st *stream) error {
	ctx, cancel := s.bounded(r.Context())
	defer cancel()
	return s.timedOutIn(ctx, s.tail(ctx, sessionID, after, open, st))
}

func (s *Server) tail(ctx context.Context, sessionID string, after *int64, open map[int64][]byte, st *stream) error {
	for seq, sent := range open {
		msgs, err := s.st.Messages(ctx, sessionID, loom.MessageQuery{After: seq - 1, Before: seq + 1, Limit: 1})
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			delete(open, seq)
			continue
		}
		b, err := json.Marshal(msgs[0])
		if err != nil {
			return err
		}
		if !bytes.Equal(b, sent) {
			if err := st.send("message", strconv.FormatInt(seq, 10), json.RawMessage(b)); err != nil {
				return nil
			}
		}
		if hasOpenTool(msgs[0]) {
			open[seq] = b
		} else {
			delete(open, seq)
		}
	}
	for {
		// Seqs are gap-free, so (after, after+batch] is the next batch
		// in order, however many messages arrived.
		msgs, err := s.st.Messages(ctx, sessionID, loom.MessageQuery{After: *after, Before: *after + tailBatch + 1, Limit: tailBatch})
		if err != nil {
			return err
		}
		for _, m := range msgs {
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if err := st.send("message", strconv.FormatInt(m.Seq, 10), json.RawMessage(b)); err != nil {
				return nil
			}
			*after = m.Seq
			if hasOpenTool(m) {
				open[m.Seq] = b
			}
		}
		if len(msgs) < tailBatch {
			return nil
		}
	}
}

func hasOpenTool(m *loom.Message) bool {
	for _, p := range m.Parts {
		if p.Type == loom.PartTool && (p.Status == loom.ToolPending || p.Status == loom.ToolRunning) {
			return true
		}
	}
	return false
}

// listEvents streams a "sessions" event whenever the user's newest
// activity changes (a session made, a message stored in any session):
// what the dashboard's list needs to redraw itself. The store is read
// every PollInterval for the most recently active session only, one
// indexed row, however many sessions the user has; a change that is not
// activity (a rename of an older session, a move to the trash) shows at
// the next activity or reload.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	ctx, user := r.Context(), userOf(r)
	release, err := s.streams.acquire(user)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer release()
	mark := func() (string, error) {
		c, cancel := s.bounded(ctx)
		defer cancel()
		newest, err := s.st.Sessions(c, loom.SessionFilter{UserID: user, Limit: 1, Archived: loom.WithArchived})
		if err != nil {
			return "", err
		}
		m := ""
		for _, x := range newest {
			m = x.ID + " " + x.UpdatedAt.String() + " " + strconv.Itoa(x.MessageCount) + " " + x.Title
		}
		return m, nil
	}
	last, err := mark()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st := startStream(w)
	st.send("ready", "", map[string]any{})
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	keep := time.NewTicker(s.cfg.KeepAlive)
	defer keep.Stop()
	for s.nextPoll(ctx, st, poll, keep) {
		m, err := mark()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Error("live session list failed", "err", err)
			st.send("error", "", errorBody{Error: detailOf(err)})
			return
		}
		if m != last {
			last = m
			if st.send("sessions", "", map[string]any{}) != nil {
				return
			}
		}
	}
}
