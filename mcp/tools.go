package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/memory"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/semantic"
)

// Bounds of the tools' results.
const (
	DefaultSearchLimit   = 20
	MaxSearchLimit       = 100
	DefaultListLimit     = 20
	MaxListLimit         = 200
	DefaultMessagesLimit = 50
	MaxMessagesLimit     = 200
)

func readOnly(title string) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
}

// Argument schemas shared by several tools.
const (
	projectArgs = `"project": {"type": "string", "description": "Keep to one project: its directory path, its name (the directory's base name) or its id. Default: the project loom mcp was started in."},
		"all_projects": {"type": "boolean", "default": false, "description": "Look in every project (and in sessions outside any), not only the default one."}`
	surfaceArg = `"surface": {"type": "string", "description": "Keep to sessions of one surface: cli (loom's own), claude-code, codex, gemini, opencode, or a chat surface such as telegram."}`
)

func (t *tools) searchSessions() tool {
	return tool{
		tool: &sdk.Tool{
			Name:        "search_sessions",
			Title:       "Search past sessions",
			Description: `Full-text search over everything said in the user's sessions with AI agents — loom's own and those imported from Claude Code, Codex CLI, Gemini CLI and opencode: prompts, replies, reasoning, tool calls and their output. Messages holding every word come first; when they are fewer than limit, the page fills up with messages holding word forms of them, sessions whose title holds them, messages holding some of them (rarer words first), then prefixes and typos, each such hit marked with its tier (word_forms, title, any_word, fuzzy), unless exact is true; put a phrase in double quotes to match it exactly. Best matches first, each with its session id, the message's seq and a snippet with the matches in **bold**. By default only the current project is searched; set all_projects to search everywhere. To read around a hit, call read_session with its session id and before_seq a few past its seq.`,
			InputSchema: json.RawMessage(`{"type": "object", "properties": {
		"query": {"type": "string", "description": "The words to find, e.g. retry backoff or \"connection refused\". Every word must appear."},
		"limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20, "description": "Most matches to return."},
		` + projectArgs + `,
		` + surfaceArg + `,
		"role": {"type": "string", "enum": ["user", "assistant", "tool", "system", "summary"], "description": "Keep to messages of one role: user for what the user asked, assistant for what agents answered."},
		"since": {"type": "string", "description": "Keep to messages from this time on: a date (2026-11-01), an RFC 3339 time, or an age such as 7d, 12h or 2w."},
		"until": {"type": "string", "description": "Keep to messages before this time, written as for since."},
		"exact": {"type": "boolean", "default": false, "description": "Only messages holding every word: no other tiers."},
		"semantic": {"type": "boolean", "default": false, "description": "Rank by meaning only (where an embeddings model is configured): finds messages that say the same in other words. By default keyword and meaning rankings are fused when a model is at hand."},
		"keyword": {"type": "boolean", "default": false, "description": "Rank by keywords only, not by meaning."}
	}, "required": ["query"]}`),
			Annotations: readOnly("Search past sessions"),
		},
		run: t.runSearch,
	}
}

type searchArgs struct {
	Query       *string `json:"query"`
	Limit       *int    `json:"limit"`
	Project     string  `json:"project"`
	AllProjects bool    `json:"all_projects"`
	Surface     string  `json:"surface"`
	Role        string  `json:"role"`
	Since       string  `json:"since"`
	Until       string  `json:"until"`
	Exact       bool    `json:"exact"`
	Semantic    bool    `json:"semantic"`
	Keyword     bool    `json:"keyword"`
}

// searchResult is search_sessions' structured content: the hits in the
// shape of GET /api/v1/search, the scope searched, and in Hint what the
// text closes with (how to widen, read around a match, get more).
type searchResult struct {
	Hits    []loom.SearchHit `json:"hits"`
	Project *loom.Project    `json:"project"`
	More    bool             `json:"more"`
	// Partial: the search ran out of time, and Hits are the best it
	// found before, not all.
	Partial bool   `json:"partial,omitempty"`
	Hint    string `json:"hint"`
	// Redacted counts the secrets replaced by markers.
	Redacted int `json:"redacted,omitempty"`
}

func (t *tools) runSearch(ctx context.Context, c *call) (*result, error) {
	var a searchArgs
	if err := c.decode(&a, "query, limit, project, all_projects, surface, role, since, until, exact, semantic and keyword"); err != nil {
		return nil, err
	}
	if a.Query == nil || strings.TrimSpace(*a.Query) == "" {
		return nil, loom.Errorf(loom.EINVALID, "query is required: the words to find, e.g. {\"query\": \"retry backoff\"}")
	}
	// The store's own bound (loom.MaxQueryBytes), checked first so that
	// a model that pastes a passage as a query is told to pick words.
	if len(*a.Query) > loom.MaxQueryBytes {
		return nil, loom.Errorf(loom.EINVALID, "query is %d bytes; search with a few distinctive words (at most %d bytes), not a passage", len(*a.Query), loom.MaxQueryBytes)
	}
	n, err := limit("limit", a.Limit, DefaultSearchLimit, MaxSearchLimit)
	if err != nil {
		return nil, err
	}
	if a.Role != "" && !loom.ValidRole(a.Role) {
		return nil, loom.Errorf(loom.EINVALID, "role must be user, assistant, tool, system or summary, not %q", a.Role)
	}
	q := loom.SearchQuery{Text: *a.Query, UserID: c.user, Surface: a.Surface, Role: a.Role, Exact: a.Exact, Limit: n + 1}
	if q.Since, err = t.when("since", a.Since); err != nil {
		return nil, err
	}
	if q.Until, err = t.when("until", a.Until); err != nil {
		return nil, err
	}
	project, err := t.scope(ctx, c, a.Project, a.AllProjects)
	if err != nil {
		return nil, err
	}
	if project != nil {
		q.ProjectID = project.ID
	}
	mode, err := semantic.ModeOf(a.Semantic, a.Keyword)
	if err != nil {
		return nil, err
	}
	if a.Exact {
		mode = semantic.Keyword
	}
	res, err := t.searcher(c.st).Search(ctx, q, mode)
	if err != nil {
		return nil, err
	}
	hits := res.Hits
	out := searchResult{Hits: hits, Project: project, Partial: loom.Partial(hits), Redacted: c.redacted()}
	if len(hits) > n {
		out.Hits, out.More = hits[:n], true
	}
	if out.Hits == nil {
		out.Hits = []loom.SearchHit{}
	}
	hints := searchHints(*a.Query, out, n)
	out.Hint = strings.Join(hints, " ")
	return &result{text: searchText(*a.Query, out, hints, t.cfg.Now()), structured: out, redacted: out.Redacted}, nil
}

// when reads a since or until argument.
func (t *tools) when(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	at, err := human.ParseTime(v, t.cfg.Now())
	if err != nil {
		return time.Time{}, loom.Errorf(loom.EINVALID, "%s: %v", name, err)
	}
	return at, nil
}

// scope returns the project a search or list keeps to: the one named,
// else the default one, nil for every project.
func (t *tools) scope(ctx context.Context, c *call, name string, all bool) (*loom.Project, error) {
	switch {
	case name != "" && all:
		return nil, loom.Errorf(loom.EINVALID, "give project or all_projects, not both")
	case all:
		return nil, nil
	case name == "":
		if t.cfg.Project.ID == "" {
			return nil, nil
		}
		p := t.cfg.Project
		return &p, nil
	}
	return findProject(ctx, c, name)
}

// findProject finds a project by directory path, id or name. A path
// names its project even when the directory is gone, as long as it was
// the project's root.
func findProject(ctx context.Context, c *call, name string) (*loom.Project, error) {
	if filepath.IsAbs(name) {
		p := paths.ProjectOf(name)
		return &p, nil
	}
	for _, f := range []loom.SessionFilter{{ProjectID: name, Archived: loom.WithArchived}, {ProjectName: name, Archived: loom.WithArchived}} {
		f.UserID, f.Limit = c.user, 1
		list, err := c.st.Sessions(ctx, f)
		if err != nil {
			return nil, err
		}
		if len(list) > 0 {
			p := list[0].Project
			return &p, nil
		}
	}
	return nil, loom.Errorf(loom.ENOTFOUND, "no sessions in a project named %q; give its directory's full path, or list_sessions with all_projects=true to see the projects there are", name)
}

func (t *tools) listSessions() tool {
	return tool{
		tool: &sdk.Tool{
			Name:        "list_sessions",
			Title:       "List recent sessions",
			Description: `Lists the user's sessions with AI agents, most recently active first: loom's own and those imported from Claude Code, Codex CLI, Gemini CLI and opencode. Each comes with its id (use it as ref in read_session), title, surface, project, git branch, size and when it was last active. By default only the current project's sessions; set all_projects for all. query keeps sessions whose title, key, description or last prompt contains it, or whose messages match it.`,
			InputSchema: json.RawMessage(`{"type": "object", "properties": {
		"limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20, "description": "Most sessions to return."},
		` + projectArgs + `,
		` + surfaceArg + `,
		"query": {"type": "string", "description": "Keep sessions whose title, key, description or last prompt contains this text, or whose messages match it as search_sessions would."},
		"cursor": {"type": "string", "description": "Where to continue: the next value a previous list_sessions returned."}
	}}`),
			Annotations: readOnly("List recent sessions"),
		},
		run: t.runList,
	}
}

type listArgs struct {
	Limit       *int   `json:"limit"`
	Project     string `json:"project"`
	AllProjects bool   `json:"all_projects"`
	Surface     string `json:"surface"`
	Query       string `json:"query"`
	Cursor      string `json:"cursor"`
}

// listResult is list_sessions' structured content, in the shape of GET
// /api/v1/sessions, with in Hint what the text closes with.
type listResult struct {
	Sessions []*loom.Session `json:"sessions"`
	Next     string          `json:"next"`
	Project  *loom.Project   `json:"project"`
	Hint     string          `json:"hint,omitempty"`
	Redacted int             `json:"redacted,omitempty"`
}

func (t *tools) runList(ctx context.Context, c *call) (*result, error) {
	var a listArgs
	if err := c.decode(&a, "limit, project, all_projects, surface, query and cursor"); err != nil {
		return nil, err
	}
	n, err := limit("limit", a.Limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return nil, err
	}
	if len(a.Query) > loom.MaxQueryBytes {
		return nil, loom.Errorf(loom.EINVALID, "query is %d bytes; a few words of a title or prompt are enough (at most %d bytes)", len(a.Query), loom.MaxQueryBytes)
	}
	f := loom.SessionFilter{UserID: c.user, Surface: a.Surface, Text: a.Query, Limit: n + 1}
	if a.Cursor != "" {
		if f.Before, err = loom.ParseCursor(a.Cursor); err != nil {
			return nil, err
		}
	}
	project, err := t.scope(ctx, c, a.Project, a.AllProjects)
	if err != nil {
		return nil, err
	}
	if project != nil {
		f.ProjectID = project.ID
	}
	list, err := c.st.Sessions(ctx, f)
	if err != nil {
		return nil, err
	}
	out := listResult{Sessions: list, Project: project, Redacted: c.redacted()}
	if len(list) > n {
		out.Sessions = list[:n]
		out.Next = loom.CursorAfter(out.Sessions[n-1]).String()
	}
	if out.Sessions == nil {
		out.Sessions = []*loom.Session{}
	}
	hints := listHints(out, a.Query)
	out.Hint = strings.Join(hints, " ")
	return &result{text: listText(out, a.Query, hints, t.cfg.Now()), structured: out, redacted: out.Redacted}, nil
}

func (t *tools) readSession() tool {
	return tool{
		tool: &sdk.Tool{
			Name:        "read_session",
			Title:       "Read a session",
			Description: `Reads one session: its details and its newest messages in order (prompts, replies, reasoning, tool calls with status and output). ref is the session's id (or a unique prefix of 4+ characters), its key, or its exact title. Page back with before_seq; read one turn (a prompt and everything it led to) from its start with turn, and page on with after_seq. Long texts and tool outputs are cut, with a note saying how to read the rest (seq and offset).`,
			InputSchema: json.RawMessage(`{"type": "object", "properties": {
		"ref": {"type": "string", "description": "The session: its id or a unique id prefix of at least 4 characters (as search_sessions and list_sessions give them), its key, or its title."},
		"limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50, "description": "Most messages to return: the newest ones (before before_seq when given)."},
		"before_seq": {"type": "integer", "minimum": 1, "description": "Return only messages before this seq: how to page back to older messages."},
		"turn": {"type": "integer", "minimum": 1, "description": "Return only this turn, from its start: its user prompt and the messages after it up to the next prompt (at most limit; after_seq reads on)."},
		"after_seq": {"type": "integer", "minimum": 1, "description": "Return the oldest messages after this seq: how to read on, in a turn or in the whole session."},
		"seq": {"type": "integer", "minimum": 1, "description": "Return only the message with this seq, with up to 20,000 characters of each text and tool output."},
		"offset": {"type": "integer", "minimum": 0, "default": 0, "description": "With seq: skip this many characters of each long text or output, to read what an earlier call cut."}
	}, "required": ["ref"]}`),
			Annotations: readOnly("Read a session"),
		},
		run: t.runRead,
	}
}

type readArgs struct {
	Ref       *string `json:"ref"`
	Limit     *int    `json:"limit"`
	BeforeSeq int64   `json:"before_seq"`
	AfterSeq  int64   `json:"after_seq"`
	Turn      int     `json:"turn"`
	Seq       int64   `json:"seq"`
	Offset    int     `json:"offset"`
}

// readResult is read_session's structured content: the session and its
// messages in the shapes of GET /api/v1/sessions/{id} and its messages,
// with texts cut as the text says (Cut lists where). NextBefore is the
// before_seq of the page before, NextAfter the after_seq of the page
// after (0: none), and Hint says in words how to read on.
type readResult struct {
	Session    *loom.Session   `json:"session"`
	Messages   []*loom.Message `json:"messages"`
	NextBefore int64           `json:"next_before"`
	NextAfter  int64           `json:"next_after"`
	Cut        []cut           `json:"cut"`
	Hint       string          `json:"hint,omitempty"`
	Redacted   int             `json:"redacted,omitempty"`
}

func (t *tools) runRead(ctx context.Context, c *call) (*result, error) {
	var a readArgs
	if err := c.decode(&a, "ref, limit, before_seq, after_seq, turn, seq and offset"); err != nil {
		return nil, err
	}
	if a.Ref == nil || strings.TrimSpace(*a.Ref) == "" {
		return nil, loom.Errorf(loom.EINVALID, "ref is required: a session id from search_sessions or list_sessions, e.g. {\"ref\": \"0196a3b2\"}")
	}
	n, err := limit("limit", a.Limit, DefaultMessagesLimit, MaxMessagesLimit)
	if err != nil {
		return nil, err
	}
	switch {
	case a.BeforeSeq < 0, a.AfterSeq < 0, a.Turn < 0, a.Seq < 0, a.Offset < 0:
		return nil, loom.Errorf(loom.EINVALID, "before_seq, after_seq, turn, seq and offset must not be negative")
	case a.Seq > 0 && (a.Turn > 0 || a.BeforeSeq > 0 || a.AfterSeq > 0):
		return nil, loom.Errorf(loom.EINVALID, "give seq alone (one message), not with turn, before_seq or after_seq")
	case a.BeforeSeq > 0 && a.AfterSeq > 0:
		return nil, loom.Errorf(loom.EINVALID, "give before_seq (to page back) or after_seq (to read on), not both")
	case a.Offset > 0 && a.Seq == 0:
		return nil, loom.Errorf(loom.EINVALID, "offset needs seq: the message whose long texts to read on")
	}
	s, err := t.resolve(ctx, c, strings.TrimSpace(*a.Ref))
	if err != nil {
		return nil, err
	}
	// A turn, or what follows after_seq, is read from its start; the
	// session, or what comes before before_seq, from its end.
	q := loom.MessageQuery{Limit: n, Before: a.BeforeSeq, After: a.AfterSeq, Turn: a.Turn,
		Oldest: a.BeforeSeq == 0 && (a.Turn > 0 || a.AfterSeq > 0)}
	if q.Oldest {
		// One more than asked tells whether more follow.
		q.Limit++
	}
	if a.Seq > 0 {
		q = loom.MessageQuery{Limit: 1, Before: a.Seq + 1, After: a.Seq - 1}
	}
	if a.Turn > s.TurnCount {
		return nil, loom.Errorf(loom.EINVALID, "session %s has %s; there is no turn %d", s.ID, human.Plural(s.TurnCount, "turn"), a.Turn)
	}
	if a.Seq > int64(s.MessageCount) {
		return nil, loom.Errorf(loom.EINVALID, "session %s has %s; there is no seq %d", s.ID, human.Plural(s.MessageCount, "message"), a.Seq)
	}
	// The session is read again with its messages in one snapshot, so
	// that its counts agree with them while another process writes it.
	snap, err := c.st.ReadSessions(ctx, []string{s.ID}, q)
	if err != nil {
		return nil, err
	}
	if len(snap) == 0 {
		return nil, loom.NotFound(s.ID)
	}
	s, msgs := snap[0].Session, snap[0].Messages
	out := readResult{Session: s, Messages: msgs, Cut: []cut{}, Redacted: c.redacted()}
	if q.Oldest && len(msgs) > n {
		out.Messages = msgs[:n]
		out.NextAfter = msgs[n-1].Seq
	}
	if out.Messages == nil {
		out.Messages = []*loom.Message{}
	}
	first := out.Messages
	if !q.Oldest && a.Seq == 0 && len(first) > 0 && first[0].Seq > 1 && (a.Turn == 0 || first[0].Role != loom.RoleUser) {
		out.NextBefore = first[0].Seq
	}
	b := bounds{text: 4000, reasoning: 1500, input: 1000, output: 2000}
	if a.Seq > 0 {
		b = bounds{text: 20000, reasoning: 20000, input: 20000, output: 20000, offset: a.Offset}
	}
	out.Messages, out.Cut = b.apply(out.Messages)
	hints := readHints(out, a)
	out.Hint = strings.Join(hints, " ")
	return &result{text: readText(out, a, hints, t.cfg.Now()), structured: out, redacted: out.Redacted}, nil
}

// resolve finds the session ref names for c's user, preferring the
// default project's keys; a session in the trash is not found, and says
// so.
func (t *tools) resolve(ctx context.Context, c *call, ref string) (*loom.Session, error) {
	scope := loom.ResolveScope{UserID: c.user, ProjectID: t.cfg.Project.ID}
	s, err := c.st.Resolve(ctx, ref, scope)
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		return nil, loom.Errorf(loom.ENOTFOUND, "no session matches %q; use an id from search_sessions or list_sessions (list_sessions with all_projects=true lists every project's)", ref)
	}
	return s, err
}

func (t *tools) memory() tool {
	return tool{
		tool: &sdk.Tool{
			Name:        "memory",
			Title:       "Long-term memory",
			Description: `Reads or appends to the user's long-term memory files, which loom's own agent reads at the start of every session: "memory" (MEMORY.md: facts and decisions worth keeping across sessions and projects) and "user" (USER.md: about the user — preferences, role, how they like to work). Append short, self-contained notes that will still matter later; never secrets.`,
			InputSchema: json.RawMessage(`{"type": "object", "properties": {
		"action": {"type": "string", "enum": ["read", "append"], "description": "read returns the file's text; append adds text at its end."},
		"file": {"type": "string", "enum": ["memory", "user"], "default": "memory", "description": "memory for MEMORY.md, user for USER.md."},
		"text": {"type": "string", "description": "With append: the note to add, a line or a few."}
	}, "required": ["action"]}`),
			Annotations: &sdk.ToolAnnotations{Title: "Long-term memory", DestructiveHint: new(false), OpenWorldHint: new(false)},
		},
		run: t.runMemory,
	}
}

type memoryArgs struct {
	Action string `json:"action"`
	File   string `json:"file"`
	Text   string `json:"text"`
}

// memoryResult is memory's structured content.
type memoryResult struct {
	File   string `json:"file"`
	Action string `json:"action"`
	Text   string `json:"text,omitempty"`
}

// maxMemoryRead bounds what a read of a memory file returns.
const maxMemoryRead = 64 << 10

func (t *tools) runMemory(ctx context.Context, c *call) (*result, error) {
	var a memoryArgs
	if err := c.decode(&a, "action, file and text"); err != nil {
		return nil, err
	}
	var memFile, userFile string
	if t.cfg.Memory != nil {
		memFile, userFile = t.cfg.Memory(c.user)
	}
	path := memFile
	switch a.File {
	case "", "memory":
	case "user":
		path = userFile
	default:
		return nil, loom.Errorf(loom.EINVALID, "file must be \"memory\" (MEMORY.md) or \"user\" (USER.md), not %q", a.File)
	}
	if path == "" {
		return nil, loom.Errorf(loom.EINVALID, "there are no memory files for user %s here", c.user)
	}
	name := filepath.Base(path)
	switch a.Action {
	case "read":
		text, err := memory.Read(path)
		if err != nil {
			return nil, err
		}
		// Memory goes to the client's model like any result: redacted
		// whole, before its start is cut.
		text = c.text(text)
		shown := text
		if len(shown) > maxMemoryRead {
			shown = shown[len(shown)-maxMemoryRead:]
		}
		body := shown
		switch {
		case text == "":
			body = name + " is empty."
		case len(shown) < len(text):
			body = fmt.Sprintf("[%s is %d bytes; its last %d are shown]\n%s", name, len(text), len(shown), shown)
		}
		return &result{text: body, structured: memoryResult{File: name, Action: a.Action, Text: shown}}, nil
	case "append":
		if err := memory.Append(path, a.Text); err != nil {
			return nil, err
		}
		return &result{text: "Appended to " + name + ".", structured: memoryResult{File: name, Action: a.Action}}, nil
	case "":
		return nil, loom.Errorf(loom.EINVALID, "action is required: \"read\" or \"append\"")
	}
	return nil, loom.Errorf(loom.EINVALID, "action must be \"read\" or \"append\", not %q", a.Action)
}
