package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxFrameBytes bounds one message on standard input when
// Config.MaxFrameBytes is zero. Tool calls are a few hundred bytes; the
// bound is there so that a runaway client cannot make loom mcp hold an
// endless line in memory.
const DefaultMaxFrameBytes = 16 << 20

// Serve runs the server on in and out (standard input and output for
// loom mcp) until the client disconnects or ctx ends.
//
// Messages are lines of JSON. A line that is not one JSON-RPC message
// never stops the server, as it would the SDK's own transport: a line
// that is not JSON is answered with a parse error (-32700), one that is
// JSON but no message (a batch, an object without a method or a result)
// with an invalid request (-32600), one longer than Config.MaxFrameBytes
// with an invalid request too, read to its end without being kept. The
// server then reads the next line.
func Serve(ctx context.Context, cfg Config, in io.ReadCloser, out io.WriteCloser) error {
	limit := cfg.MaxFrameBytes
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pending := newPending()
	w := &frameWriter{w: out, pending: pending}
	pr, pw := io.Pipe()
	f := &frameFilter{in: in, to: pw, out: w, limit: limit, log: logger, pending: pending, done: ctx.Done()}
	go f.run()
	// The filter passes only whole messages, each on a line of its own:
	// the SDK's transport needs no bound of its own.
	err := NewServer(cfg).Run(ctx, &sdk.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1})
	pr.Close()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("mcp server: %w", err)
}

// pendingAtEOF bounds how long loom mcp waits, once its input has
// ended, for the answers to requests still running: longer than any
// tool call takes.
const pendingAtEOF = 2 * time.Minute

// frameWriter writes whole frames to w one at a time: the SDK writes
// each message with one Write, and the filter's error answers come
// between them, never inside one. Each response written answers a
// pending request.
type frameWriter struct {
	mu      sync.Mutex
	w       io.WriteCloser
	pending *pending
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.w.Write(p)
	if msg, derr := jsonrpc.DecodeMessage(bytes.TrimSpace(p)); derr == nil {
		if r, ok := msg.(*jsonrpc.Response); ok {
			f.pending.done(r.ID)
		}
	}
	return n, err
}

// pending is the requests passed on to the server and not answered yet:
// when its input ends, loom mcp answers them before it exits, so that a
// client that writes its requests and closes its end (a pipe) gets every
// answer.
type pending struct {
	mu   sync.Mutex
	ids  map[any]bool
	none chan struct{} // closed while ids is empty
}

func newPending() *pending {
	p := &pending{ids: map[any]bool{}, none: make(chan struct{})}
	close(p.none)
	return p
}

func (p *pending) add(id jsonrpc.ID) {
	if !id.IsValid() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) == 0 {
		p.none = make(chan struct{})
	}
	p.ids[id.Raw()] = true
}

func (p *pending) done(id jsonrpc.ID) {
	if !id.IsValid() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ids[id.Raw()] {
		return
	}
	delete(p.ids, id.Raw())
	if len(p.ids) == 0 {
		close(p.none)
	}
}

// empty returns a channel closed once no request is pending.
func (p *pending) empty() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.none
}

func (f *frameWriter) Close() error { return f.w.Close() }

// frameFilter reads lines from in and passes each that is one JSON-RPC
// message on to the server's transport (to); it answers every other
// line itself on out.
type frameFilter struct {
	in      io.Reader
	to      *io.PipeWriter
	out     *frameWriter
	limit   int
	log     *slog.Logger
	pending *pending
	done    <-chan struct{} // the server's context's
}

func (f *frameFilter) run() {
	r := bufio.NewReaderSize(f.in, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case tooLong:
		case len(line)+len(chunk) > f.limit+2: // the limit, and \r\n
			tooLong, line = true, nil
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(chunk) > 0 || len(line) > 0 || tooLong {
			if werr := f.frame(line, tooLong); werr != nil {
				f.to.CloseWithError(werr)
				return
			}
		}
		line, tooLong = line[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				// The client wrote its last request: answer what is
				// pending before the server stops.
				err = nil
				select {
				case <-f.pending.empty():
				case <-f.done:
				case <-time.After(pendingAtEOF):
					f.log.Warn("mcp: input ended with requests still unanswered", "after", pendingAtEOF)
				}
			}
			f.to.CloseWithError(err)
			return
		}
	}
}

// frame handles one line: passes it on, or answers it with an error.
// Only a failure to write, to the server or to the client, is returned.
func (f *frameFilter) frame(line []byte, tooLong bool) error {
	if tooLong {
		return f.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes: skipped", f.limit))
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if !json.Valid(line) {
		return f.refuse(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON; send one JSON-RPC message per line")
	}
	if line[0] != '{' {
		return f.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: send one JSON-RPC message object per line (batches are not taken)")
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return f.refuse(idOf(line), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	if r, ok := msg.(*jsonrpc.Response); ok && r.Result == nil && r.Error == nil {
		return f.refuse(idOf(line), jsonrpc.CodeInvalidRequest, "invalid request: neither a method nor a result")
	}
	if r, ok := msg.(*jsonrpc.Request); ok {
		f.pending.add(r.ID)
	}
	_, err = f.to.Write(append(line, '\n'))
	return err
}

// refuse answers a line that is no message with a JSON-RPC error, for
// the request id when one could be read.
func (f *frameFilter) refuse(id any, code int64, message string) error {
	f.log.Warn("mcp: skipped a message that is not JSON-RPC", "code", code, "error", message)
	b, err := json.Marshal(struct {
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	if err != nil {
		return err
	}
	_, err = f.out.Write(append(b, '\n'))
	return err
}

// idOf returns the id of a JSON object that claims to be a request, if
// it is a string or a number; nil otherwise.
func idOf(line []byte) any {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &v) != nil || len(v.ID) == 0 {
		return nil
	}
	var id any
	if json.Unmarshal(v.ID, &id) != nil {
		return nil
	}
	switch id.(type) {
	case string, float64:
		return json.RawMessage(v.ID)
	}
	return nil
}
