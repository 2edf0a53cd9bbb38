// Package mcp offers loom's store to any agent over the Model Context
// Protocol, through the official Go SDK: search_sessions, list_sessions,
// read_session and memory, on standard input and output (loom mcp) or
// over streamable HTTP behind loom's bearer tokens (loom serve, /mcp). It
// also connects loom's own agent to the MCP servers its configuration
// names (client.go).
//
// The tools read through loom.Reader like every other way out: no SQL of
// their own, no session lock ever taken, and only memory writes (to the
// memory files, never to sessions) — and handoff, when the configuration
// turns it on, which writes another agent's session files. Every result is bounded, and every
// bad argument or failed read is a tool error whose text tells the model
// what to do instead; the server itself keeps answering.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/semantic"
)

// Config is what the tools read and whom they serve.
type Config struct {
	// Team says the store is a team's (loom mcp --team): the usage
	// tool's reports are by member unless another breakdown is asked.
	Team bool
	// Store returns the store to read. It is called for every tool call,
	// so that a store created after the server started is found.
	Store func(ctx context.Context) (loom.Engine, error)
	// User is whose sessions the tools read. Empty: the user of the
	// request's bearer token, which HTTPHandler checks and passes on.
	User string
	// Project is the default project of search_sessions and
	// list_sessions (the working directory's); zero: every project.
	Project loom.Project
	// Memory returns the memory files user may read and append to; nil,
	// or empty paths, make the memory tool answer that there are none.
	Memory func(user string) (memoryFile, userFile string)
	// Prices prices the usage tool's reports (nil: the bundled table).
	Prices *pricing.Table
	// Version is loom's version, announced to clients.
	Version string
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// Logger receives the server's diagnostics (default: discard).
	Logger *slog.Logger
	// CallTimeout bounds one tool call (default 15s).
	CallTimeout time.Duration
	// Searcher returns the searcher of a store, which ranks by meaning
	// too where an embeddings model is at hand; nil ranks by keywords.
	Searcher func(st loom.Reader) *semantic.Searcher
	// Handoff, when set, offers the handoff tool, which writes another
	// agent's session files; nil leaves it out.
	Handoff *Handoff
	// Files offers the blame tool, which reads files of this machine's
	// git repositories: loom mcp's, whose user is the machine's; never
	// /mcp of loom serve, whose users the machine's files are not.
	Files bool
	// BlameCache is the directory of the blame tool's line-age cache
	// (blame.Blamer.Cache); empty: none.
	BlameCache string
	// MaxFrameBytes bounds one message read by Serve (default
	// DefaultMaxFrameBytes); a longer one is refused and skipped.
	MaxFrameBytes int
	// Redact, when set, is the detector of the gate every tool reads
	// the store through (secrets.Gate): what the tools return (search
	// snippets, session titles and prompts, messages, recalled turns,
	// memory, hand-off files) has its secrets replaced with markers
	// before anything cuts or highlights it, and each result says how
	// many.
	Redact *secrets.Detector
}

// DefaultCallTimeout bounds a tool call when Config.CallTimeout is zero.
const DefaultCallTimeout = 15 * time.Second

const instructions = `loom keeps the user's conversations with AI agents: its own sessions and those imported from Claude Code, Codex CLI, Gemini CLI and opencode, across projects. Use search_sessions to find what was said or decided ("retry backoff", "why did we drop redis"), list_sessions to see recent sessions, read_session to read one (newest messages first, page back with before_seq, or one turn), and memory to read or add to the notes kept across sessions. Session ids from one tool work as ref in read_session.`

// NewServer returns an MCP server with loom's tools over cfg.
func NewServer(cfg Config) *sdk.Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "loom", Title: "loom session history", Version: version},
		&sdk.ServerOptions{Instructions: instructions, Logger: cfg.Logger})
	t := &tools{cfg: cfg}
	for _, tl := range t.all() {
		srv.AddTool(tl.tool, t.handler(tl))
	}
	srv.AddReceivingMiddleware(initializeOnce)
	return srv
}

// initializeOnce answers an initialize in a session that is already
// initialized with JSON-RPC's invalid-request error (-32600) and a
// message saying so. The SDK refuses it with a plain error, which
// reaches the client as error code 0, a code JSON-RPC does not define.
func initializeOnce(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "initialize" {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*sdk.ServerSession)
		if ss != nil && ss.InitializeParams() != nil {
			return nil, alreadyInitialized
		}
		res, err := next(ctx, method, req)
		var wire *jsonrpc.Error
		if err != nil && !errors.As(err, &wire) && ss != nil && ss.InitializeParams() != nil {
			// A second initialize that raced the first one.
			err = alreadyInitialized
		}
		return res, err
	}
}

var alreadyInitialized = &jsonrpc.Error{
	Code:    jsonrpc.CodeInvalidRequest,
	Message: "invalid request: this session is already initialized; send initialize once, as a session's first request",
}

// tool is one tool: what clients see and what runs it.
type tool struct {
	tool *sdk.Tool
	run  func(ctx context.Context, c *call) (*result, error)
}

// call is one tool call as a handler sees it.
type call struct {
	user string
	// st is what the call reads: the engine through the gate, or the
	// engine itself when results are not redacted ([mcp] redact =
	// false). A tool reads the store through it alone, and writes none.
	st   loom.Reader
	args json.RawMessage
	name string
	// gate is the gate st reads through; nil when results are not
	// redacted.
	gate *secrets.Gate
	// edits, roots and versions are the engine's edit index, its
	// recorded roots and the index's version, which the gate does not
	// read through (the index's rows carry the parts as stored): the
	// handler takes them from the engine it opened, for blame, which
	// redacts the file it makes whole. Roots is nil where the engine
	// records none.
	edits    loom.EditStore
	roots    loom.RootLister
	versions loom.EditVersioner
}

// text passes a text read from elsewhere than the store (a memory
// file) through the call's gate.
func (c *call) text(s string) string {
	if c.gate == nil {
		return s
	}
	return c.gate.Text(s)
}

// lines redacts the lines of one text as the text they make (see
// secrets.Gate.Lines).
func (c *call) lines(ls []string) []string {
	if c.gate == nil {
		return ls
	}
	return c.gate.Lines(ls)
}

// redacted is how many secrets the call's gate has replaced so far.
func (c *call) redacted() int {
	if c.gate == nil {
		return 0
	}
	return c.gate.Redacted()
}

// gated redacts the message of an error on its way out.
func (c *call) gated(err error) error {
	if c.gate == nil || err == nil {
		return err
	}
	if loom.ErrorCode(err) != loom.EINTERNAL {
		return err
	}
	return errors.New(c.gate.Text(err.Error()))
}

// result is a tool's answer: text for the model and the same in loom's
// JSON shapes.
type result struct {
	text       string
	structured any
	// redacted counts the secrets replaced by markers in the result.
	redacted int
}

// structured is a tool's structured content as it is sent: its JSON,
// with a cost the price table does not know as null, never 0 (Codex
// gives its model this, not the text, which says "—").
func structured(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return json.RawMessage(human.NullUnknownCosts(b))
}

type tools struct{ cfg Config }

// searcher is the searcher of st: Config.Searcher's, or one that ranks
// by keywords.
func (t *tools) searcher(st loom.Reader) *semantic.Searcher {
	if t.cfg.Searcher != nil {
		return t.cfg.Searcher(st)
	}
	return &semantic.Searcher{Store: st}
}

func (t *tools) all() []tool {
	all := []tool{t.searchSessions(), t.listSessions(), t.readSession(), t.recall(), t.usage(), t.memory()}
	if t.cfg.Files {
		all = append(all, t.blame())
	}
	if t.cfg.Handoff != nil && len(t.cfg.Handoff.Writers) > 0 {
		all = append(all, t.handoff())
	}
	return all
}

// handler runs one tool call: it finds the user and the store, bounds
// the call in time, and turns every failure, a panic included, into a
// tool error the model can read.
func (t *tools) handler(tl tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				t.cfg.Logger.Error("mcp tool panicked", "tool", tl.tool.Name, "panic", p)
				res, err = toolError(fmt.Errorf("%s failed inside loom; try again or with other arguments", tl.tool.Name)), nil
			}
		}()
		user := t.cfg.User
		if user == "" && req.Extra != nil && req.Extra.TokenInfo != nil {
			user = req.Extra.TokenInfo.UserID
		}
		if user == "" {
			return toolError(errors.New("no user: loom cannot tell whose sessions to read")), nil
		}
		ctx, cancel := context.WithTimeout(ctx, t.cfg.CallTimeout)
		defer cancel()
		st, err := t.cfg.Store(ctx)
		if err != nil {
			return toolError(fmt.Errorf("the session store cannot be opened: %s", loom.ErrorMessage(err))), nil
		}
		c := &call{user: user, st: st, args: req.Params.Arguments, name: tl.tool.Name,
			edits: st, roots: st.Optional().Roots, versions: st}
		// Every tool reads through the gate: what it returns was
		// redacted as it was read, before any of it was cut, numbered
		// or highlighted.
		var gate *secrets.Gate
		if t.cfg.Redact != nil {
			gate = t.cfg.Redact.Gate(st)
			c.st, c.gate = gate, gate
		}
		out, err := tl.run(ctx, c)
		if err != nil {
			return toolError(t.explain(ctx, tl.tool.Name, c.gated(err))), nil
		}
		if gate != nil {
			out.redacted = gate.Redacted()
		}
		if out.redacted > 0 {
			out.text += fmt.Sprintf("\n\nloom redacted %s in this result: each is marked [REDACTED:rule].", human.Plural(out.redacted, "secret"))
		}
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: out.text}},
			StructuredContent: structured(out.structured),
		}, nil
	}
}

// explain turns an error into a sentence for the model: a bad argument
// or unknown session as it is, a timeout or a busy store with what to do.
func (t *tools) explain(ctx context.Context, name string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("%s took longer than %s and was stopped; narrow it (fewer or rarer words, a project, a surface, since) and call again", name, t.cfg.CallTimeout)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s was cancelled", name)
	}
	switch loom.ErrorCode(err) {
	case loom.EINVALID, loom.ENOTFOUND, loom.EAMBIGUOUS:
		return errors.New(loom.ErrorMessage(err))
	}
	t.cfg.Logger.Warn("mcp tool failed", "tool", name, "err", err)
	return fmt.Errorf("%s could not read the store: %s; try again in a moment", name, loom.ErrorMessage(err))
}

func toolError(err error) *sdk.CallToolResult {
	res := &sdk.CallToolResult{}
	res.SetError(err)
	return res
}

// decode reads a call's arguments into v, refusing unknown ones and
// values of the wrong type with a sentence naming the argument.
func (c *call) decode(v any, known string) error {
	if len(c.args) == 0 || string(c.args) == "null" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(c.args)))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		return loom.Errorf(loom.EINVALID, "argument %q must be %s, not %s", te.Field, typeName(te.Type.Kind().String()), te.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return loom.Errorf(loom.EINVALID, "unknown argument %s: %s takes %s", field, c.name, known)
	}
	return loom.Errorf(loom.EINVALID, "arguments of %s are not a JSON object: %v", c.name, err)
}

func typeName(kind string) string {
	switch kind {
	case "int", "int64":
		return "a whole number"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	}
	return kind
}

// limit checks an optional limit argument against its bounds.
func limit(name string, v *int, def, most int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < 1 || *v > most {
		return 0, loom.Errorf(loom.EINVALID, "%s must be between 1 and %d (default %d), not %d; page with the hint a result gives instead of asking for more at once", name, most, def, *v)
	}
	return *v, nil
}
