package blame

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/internal/safefile"
)

// TraceVersion is the version of the Agent Trace specification loom
// writes (0.1, github.com/cursor/agent-trace); records of any 0.x or
// 1.x version are read.
const TraceVersion = "0.1.0"

// TraceFile is where the Agent Trace reference implementation keeps a
// repository's records, one JSON record a line; loom reads it when it
// is there and writes it only when told to (loom blame trace export -o).
const TraceFile = ".agent-trace/traces.jsonl"

// Record is an Agent Trace record: the lines of files at one revision
// and the conversations (and models) that produced them.
type Record struct {
	Version   string         `json:"version"`
	ID        string         `json:"id"`
	Timestamp string         `json:"timestamp"`
	VCS       *TraceVCS      `json:"vcs,omitempty"`
	Tool      *TraceTool     `json:"tool,omitempty"`
	Files     []TracedFile   `json:"files"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// source is what the lines the record accounts for say they came
	// from (Line.Source): "trace", or "notes" for a git note.
	source string
}

// TraceVCS names the revision a record's line numbers are at.
type TraceVCS struct {
	Type     string `json:"type"`
	Revision string `json:"revision"`
}

// TraceTool is the program that wrote a record.
type TraceTool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// TracedFile is one file of a record, by its path in the repository.
type TracedFile struct {
	Path          string              `json:"path"`
	Conversations []TraceConversation `json:"conversations"`
}

// TraceConversation is the ranges of lines one conversation produced.
type TraceConversation struct {
	URL         string            `json:"url,omitempty"`
	Contributor *TraceContributor `json:"contributor,omitempty"`
	Ranges      []TraceRange      `json:"ranges"`
	Related     []TraceRelated    `json:"related,omitempty"`
}

// TraceContributor is who produced lines: human, ai, mixed or unknown,
// and the model (provider/model, as models.dev names them).
type TraceContributor struct {
	Type    string `json:"type"`
	ModelID string `json:"model_id,omitempty"`
}

// TraceRange is lines start to end (1-based, inclusive) at the record's
// revision.
type TraceRange struct {
	StartLine   int               `json:"start_line"`
	EndLine     int               `json:"end_line"`
	ContentHash string            `json:"content_hash,omitempty"`
	Contributor *TraceContributor `json:"contributor,omitempty"`
}

// TraceRelated is another resource a conversation links to.
type TraceRelated struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// traceOrigin is what loom keeps of an edit in a record's metadata
// (under "dev.loom"), by conversation URL: what the contributor fields
// cannot say.
type traceOrigin struct {
	SessionID string `json:"session_id"`
	Turn      int    `json:"turn,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Model     string `json:"model,omitempty"`
	Provider  string `json:"provider,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	Seq       int64  `json:"seq,omitempty"`
	Tool      string `json:"tool,omitempty"`
	At        string `json:"at,omitempty"`
}

// contributorOf is a kind of line as Agent Trace names it.
func contributorOf(kind string) string {
	switch kind {
	case Agent:
		return "ai"
	case Mixed, Human, Unknown:
		return kind
	}
	return "unknown"
}

// kindOf is an Agent Trace contributor type as loom names it.
func kindOf(t string) string {
	switch t {
	case "ai":
		return Agent
	case Mixed, Human:
		return t
	}
	return Unknown
}

// ModelID is a model as Agent Trace names it: provider/model.
func ModelID(provider, model string) string {
	if model == "" || strings.Contains(model, "/") || provider == "" {
		return model
	}
	return provider + "/" + model
}

// SessionURL is the URL a record gives a session's turn.
func SessionURL(sessionID string, turn int) string {
	u := "loom://session/" + url.PathEscape(sessionID)
	if turn > 0 {
		u += "?turn=" + strconv.Itoa(turn)
	}
	return u
}

// NewRecord is the Agent Trace record of files blamed at revision rev,
// written by loom version: for each file, one conversation per session
// and turn with the ranges of lines its agent wrote (a human's change of
// them marked mixed), and one for the lines of humans and one for
// those whose origin is unknown.
func NewRecord(rev, version string, files []*Result, now time.Time) Record {
	if version == "" {
		version = "dev"
	}
	rec := Record{Version: TraceVersion, ID: loom.NewID(), Timestamp: now.UTC().Format("2006-01-02T15:04:05.000Z"),
		Tool: &TraceTool{Name: "loom", Version: version}, Files: []TracedFile{}}
	if rev != "" {
		rec.VCS = &TraceVCS{Type: "git", Revision: rev}
	}
	origins := map[string]traceOrigin{}
	for _, f := range files {
		tf := TracedFile{Path: f.Path, Conversations: []TraceConversation{}}
		convs := map[string]*TraceConversation{}
		var order []string
		for _, l := range f.Lines {
			key, u := l.Kind, ""
			c := &TraceContributor{Type: contributorOf(l.Kind)}
			if l.SessionID != "" {
				u = SessionURL(l.SessionID, l.Turn)
				key = u + " " + l.Model
				c.Type, c.ModelID = "ai", ModelID(l.Provider, l.Model)
				o := traceOrigin{SessionID: l.SessionID, Turn: l.Turn, Agent: l.Agent, Model: l.Model, Provider: l.Provider,
					MessageID: l.MessageID, Seq: l.Seq, Tool: l.Tool}
				if l.At != nil {
					o.At = loom.FormatTime(*l.At)
				}
				origins[u] = o
			}
			conv := convs[key]
			if conv == nil {
				conv = &TraceConversation{URL: u, Contributor: c, Ranges: []TraceRange{}}
				if l.SessionID != "" {
					conv.Related = []TraceRelated{{Type: "session", URL: SessionURL(l.SessionID, 0)}}
				}
				convs[key] = conv
				order = append(order, key)
			}
			var over *TraceContributor
			if l.Kind == Mixed {
				over = &TraceContributor{Type: "mixed", ModelID: c.ModelID}
			}
			rs := conv.Ranges
			if n := len(rs); n > 0 && rs[n-1].EndLine == l.N-1 && (rs[n-1].Contributor == nil) == (over == nil) {
				rs[n-1].EndLine = l.N
			} else {
				rs = append(rs, TraceRange{StartLine: l.N, EndLine: l.N, Contributor: over})
			}
			conv.Ranges = rs
		}
		for _, k := range order {
			tf.Conversations = append(tf.Conversations, *convs[k])
		}
		rec.Files = append(rec.Files, tf)
	}
	if len(origins) > 0 {
		rec.Metadata = map[string]any{"dev.loom": map[string]any{"conversations": origins}}
	}
	return rec
}

// maxTraceLine bounds one record read.
const maxTraceLine = 64 << 20

var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?$`) })

// ReadTraces reads Agent Trace records: one JSON record a line (the
// reference implementation's traces.jsonl), or one JSON array of them.
// A record that is not one is reported with its line and stops the
// read.
func ReadTraces(r io.Reader) ([]Record, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, _ := br.Peek(1)
	for len(first) == 1 && (first[0] == ' ' || first[0] == '\n' || first[0] == '\t' || first[0] == '\r') {
		br.ReadByte()
		first, _ = br.Peek(1)
	}
	if len(first) == 1 && first[0] == '[' {
		var recs []Record
		if err := json.NewDecoder(io.LimitReader(br, maxTraceLine)).Decode(&recs); err != nil {
			return nil, loom.Errorf(loom.EINVALID, "agent trace records: %v", err)
		}
		for i := range recs {
			if err := recs[i].Validate(); err != nil {
				return nil, loom.Errorf(loom.EINVALID, "agent trace record %d: %v", i+1, err)
			}
		}
		return recs, nil
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
	var recs []Record
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, loom.Errorf(loom.EINVALID, "agent trace line %d: %v", n, err)
		}
		if err := rec.Validate(); err != nil {
			return nil, loom.Errorf(loom.EINVALID, "agent trace line %d: %v", n, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, loom.Errorf(loom.EINVALID, "agent trace records: %v", err)
	}
	return recs, nil
}

// Validate checks what a record needs to be read: a version, an id, a
// time, files with paths, ranges with lines.
func (r *Record) Validate() error {
	switch {
	case !versionRE().MatchString(r.Version):
		return fmt.Errorf("version %q is not major.minor", r.Version)
	case r.ID == "":
		return fmt.Errorf("no id")
	case r.Timestamp == "":
		return fmt.Errorf("no timestamp")
	}
	if _, err := time.Parse(time.RFC3339Nano, r.Timestamp); err != nil {
		return fmt.Errorf("timestamp %q is not RFC 3339", r.Timestamp)
	}
	for _, f := range r.Files {
		if f.Path == "" {
			return fmt.Errorf("a file without a path")
		}
		for _, c := range f.Conversations {
			for _, rg := range c.Ranges {
				if rg.StartLine < 1 || rg.EndLine < rg.StartLine {
					return fmt.Errorf("%s: range %d-%d", f.Path, rg.StartLine, rg.EndLine)
				}
			}
		}
	}
	return nil
}

// origins are the loom metadata of a record, by conversation URL.
func (r *Record) origins() map[string]traceOrigin {
	out := map[string]traceOrigin{}
	m, _ := r.Metadata["dev.loom"].(map[string]any)
	raw, err := json.Marshal(m["conversations"])
	if err == nil {
		json.Unmarshal(raw, &out)
	}
	return out
}

// applyTraces gives the lines no session of loom's accounts for (human
// or unknown ones) the attribution of the records that cover them: the
// newest record of the file wins, its lines mapped to the blamed ones
// through a line diff of the file at its revision.
func applyTraces(ctx context.Context, g Git, rel, rev string, lines []Line, recs []Record) {
	sorted := slices.Clone(recs)
	slices.SortStableFunc(sorted, func(a, b Record) int { return strings.Compare(b.Timestamp, a.Timestamp) })
	cur := make([]string, len(lines))
	for i, l := range lines {
		cur[i] = l.Text
	}
	done := make([]bool, len(lines))
	for i, l := range lines {
		done[i] = l.SessionID != ""
	}
	contents := map[string][]int{}
	for _, rec := range sorted {
		if rec.VCS == nil || rec.VCS.Type != "git" || rec.VCS.Revision == "" {
			continue
		}
		origins := rec.origins()
		for _, f := range rec.Files {
			if strings.TrimPrefix(f.Path, "./") != rel {
				continue
			}
			// at[k] is the blamed line that line k+1 at the revision is.
			at, ok := contents[rec.VCS.Revision]
			if !ok {
				var old []string
				if rec.VCS.Revision == rev {
					old = cur
				} else if b, err := g.Show(ctx, rec.VCS.Revision, rel); err == nil {
					old = fileedit.Lines(string(b))
				}
				at = make([]int, len(old))
				for k := range at {
					at[k] = -1
				}
				for j, k := range fileedit.Match(old, cur) {
					if k >= 0 {
						at[k] = j
					}
				}
				contents[rec.VCS.Revision] = at
			}
			for _, c := range f.Conversations {
				for _, rg := range c.Ranges {
					who := c.Contributor
					if rg.Contributor != nil {
						who = rg.Contributor
					}
					if who == nil {
						continue
					}
					for k := rg.StartLine; k <= rg.EndLine && k <= len(at); k++ {
						j := at[k-1]
						if j < 0 || done[j] {
							continue
						}
						done[j] = true
						traceLine(&lines[j], who, c.URL, rec.Tool, origins)
						if rec.source != "" {
							lines[j].Source = rec.source
						}
					}
				}
			}
		}
	}
}

// traceLine sets l to what a record says of it.
func traceLine(l *Line, who *TraceContributor, u string, tool *TraceTool, origins map[string]traceOrigin) {
	l.Kind, l.Source = kindOf(who.Type), "trace"
	if l.Kind == Human || l.Kind == Unknown {
		return
	}
	if o, ok := origins[u]; ok {
		l.SessionID, l.Turn, l.Agent, l.Model, l.Provider, l.MessageID, l.Seq, l.Tool = o.SessionID, o.Turn, o.Agent, o.Model, o.Provider, o.MessageID, o.Seq, o.Tool
		if t, err := loom.ParseTime(o.At); err == nil {
			l.At = &t
		}
		return
	}
	if p, m, ok := strings.Cut(who.ModelID, "/"); ok {
		l.Provider, l.Model = p, m
	} else {
		l.Model = who.ModelID
	}
	// The record's tool is who recorded the line (the agent, or the
	// editor it ran in); the conversation is kept as its URL.
	if tool != nil {
		l.Agent = tool.Name
	}
	l.Conversation = u
}

// maxTraceFile bounds an Agent Trace file read.
const maxTraceFile = 256 << 20

// ReadTraceFile reads the Agent Trace records of a file (ReadTraces),
// refusing at once what is no regular file or is larger than 256 MiB.
func ReadTraceFile(path string) ([]Record, error) {
	f, _, err := safefile.Open(path, maxTraceFile)
	if err != nil {
		return nil, fmt.Errorf("agent trace records: %w", err)
	}
	defer f.Close()
	recs, err := ReadTraces(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// RepoTraces reads the Agent Trace records a work tree keeps in
// TraceFile; none when it has no such file.
func RepoTraces(top string) ([]Record, error) {
	recs, err := ReadTraceFile(filepath.Join(top, filepath.FromSlash(TraceFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return recs, err
}
