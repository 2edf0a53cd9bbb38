package gemini

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

var _ handoff.Writer = Format{}

// handoffSuffix ends the name of a recording a hand-off writes:
// session-<time>-<id prefix>.loom.jsonl. Gemini CLI reads any
// session-*.jsonl, but its session cleanup deletes, with a recording
// that holds nothing to resume, every file whose name ends with the same
// -<id prefix>.jsonl; and when it resumes a session it starts a
// recording of its own for it, session-<now>-<id prefix>.jsonl, that
// keeps only its session context. Named so, the handed-off recording
// is not one of the files that cleanup takes with it.
const handoffSuffix = ".loom.jsonl"

// Handoff writes h as a new Gemini CLI chat recording,
// tmp/<project>/chats/session-<time>-<id prefix>.loom.jsonl under
// $GEMINI_CLI_HOME/.gemini or ~/.gemini, where <project> is the short
// name Gemini CLI's project registry (projects.json, and the
// .project_root markers) gives h.Dir, registered as Gemini CLI does when
// it has none. The header line records the loom session in
// loomHandoff. Shell commands become run_shell_command calls and file
// reads read_file calls, each with its functionResponse, and a session
// imported from Gemini CLI keeps its calls as they were; any other tool
// call is told as text. Reasoning is kept as thoughts, which Gemini CLI
// shows and sends back to its model as thought parts, as it does its own.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	base, err := importer.HandoffDir(Tool, h, homeEnv)
	if err != nil {
		return nil, err
	}
	gdir := filepath.Join(base, ".gemini")
	slug, err := projectSlug(gdir, h.Dir)
	if err != nil {
		return nil, err
	}
	// Written back, the session keeps its id, in the chats of h.Dir's
	// project, where gemini --resume looks for it by that id.
	id := h.SessionID(uuid.NewString)
	now := h.Time()
	name := "session-" + now.Format("2006-01-02T15-04") + "-" + id[:8] + handoffSuffix
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path:   filepath.Join(gdir, "tmp", slug, "chats", name),
		Resume: handoff.ResumeIn(h.Dir, "gemini", "--resume", id)}
	sum := sha256.Sum256([]byte(h.Dir))
	recs := []any{map[string]any{
		"sessionId": id, "projectHash": hex.EncodeToString(sum[:]), "startTime": handoff.Stamp(now),
		"lastUpdated": handoff.Stamp(now), "kind": "main", handoff.OriginField: h.Origin(),
	}}
	ids := handoff.CallIDs{Prefix: "loom-call-"}
	for _, e := range handoff.Entries(h, out) {
		at := e.At
		if e.Role == loom.RoleUser {
			recs = append(recs, userRecord(e))
			continue
		}
		r := &handedReply{at: at, model: e.Model, recs: recs}
		importer.WriteReply(h, out, &ids, handoff.Tools{Target: Tool, Shell: "run_shell_command", Read: "read_file", ReadKey: "file_path"}, e.Parts, r)
		recs = r.recs
	}
	if err := handoff.WriteLines(ctx, out.Path, recs); err != nil {
		return nil, err
	}
	return out, nil
}

// userRecord is the record of a user's entry e.
func userRecord(e handoff.Entry) map[string]any {
	var content []any
	var texts []string
	for _, p := range e.Parts {
		content = append(content, map[string]any{"text": p.Text})
		texts = append(texts, p.Text)
	}
	r := map[string]any{"id": uuid.NewString(), "timestamp": handoff.Stamp(e.At), "type": "user", "content": content}
	if t := strings.TrimSpace(strings.Join(texts, "")); strings.HasPrefix(t, "/") || strings.HasPrefix(t, "?") {
		// Gemini CLI leaves a prompt that opens like one of its
		// commands (/… or ?…) out of the history it resumes: the
		// model is sent it as something the user typed, and the
		// user is shown it as typed.
		r["displayContent"] = content
		r["content"] = []any{map[string]any{"text": "The user typed: " + strings.Join(texts, "\n\n")}}
	}
	return r
}

// handedReply writes a reply's records: a record is text and thoughts,
// then the calls made after them; text after a call's result is the
// next record, as the model wrote it after reading the result.
type handedReply struct {
	at                  time.Time
	model               string
	text                []string
	thoughts, toolCalls []any
	recs                []any
}

var _ importer.ReplyWriter = (*handedReply)(nil)

// Part adds a thought or text to the record.
func (r *handedReply) Part(p loom.Part) {
	if p.Type == loom.PartReasoning {
		r.thoughts = append(r.thoughts, map[string]any{"subject": "", "description": p.Text, "timestamp": handoff.Stamp(r.at)})
	} else {
		r.text = append(r.text, p.Text)
	}
}

// Record adds a call told as text to the record's text.
func (r *handedReply) Record(text string) { r.text = append(r.text, text) }

// Calls is how many tool calls the record holds.
func (r *handedReply) Calls() int { return len(r.toolCalls) }

// Call adds tool part p's call, with its functionResponse.
func (r *handedReply) Call(callID, name string, args any, p loom.Part) {
	r.toolCalls = append(r.toolCalls, r.toolCall(callID, name, args, p))
}

// toolCall is the record of tool part p's call, with its
// functionResponse.
func (r *handedReply) toolCall(callID, name string, args any, p loom.Part) map[string]any {
	result := handoff.ResultText(p)
	resp, status := map[string]any{"output": result}, "success"
	if p.Status == loom.ToolError {
		resp, status = map[string]any{"error": result}, "error"
	}
	end := r.at
	if p.EndedAt != nil {
		end = *p.EndedAt
	}
	return map[string]any{
		"id": callID, "name": name, "args": args,
		"result":    []any{map[string]any{"functionResponse": map[string]any{"id": callID, "name": name, "response": resp}}},
		"status":    status,
		"timestamp": handoff.Stamp(end), "resultDisplay": result, "displayName": name, "description": "",
		"renderOutputAsMarkdown": false,
	}
}

// Flush adds the record of what the reply holds so far.
func (r *handedReply) Flush() {
	if len(r.text) == 0 && len(r.thoughts) == 0 && len(r.toolCalls) == 0 {
		return
	}
	rec := map[string]any{"id": uuid.NewString(), "timestamp": handoff.Stamp(r.at), "type": "gemini", "content": strings.Join(r.text, "\n\n")}
	if len(r.thoughts) > 0 {
		rec["thoughts"] = r.thoughts
	}
	if len(r.toolCalls) > 0 {
		rec["toolCalls"] = r.toolCalls
	}
	if r.model != "" {
		rec["model"] = r.model
	}
	r.recs = append(r.recs, rec)
	r.text, r.thoughts, r.toolCalls = nil, nil, nil
}

// projectSlug is the name of root's directory under tmp/, as Gemini
// CLI's project registry gives it: the one projects.json maps root to
// (unless its .project_root marker names another project), else the one
// whose marker names root, else a new one made of root's base name (with
// -1, -2 … when taken), registered in projects.json and marked in tmp/
// and history/ as Gemini CLI marks it.
func projectSlug(gdir, root string) (string, error) {
	regPath := filepath.Join(gdir, "projects.json")
	reg := struct {
		Projects map[string]string `json:"projects"`
	}{}
	if b, err := os.ReadFile(regPath); err == nil {
		if json.Unmarshal(b, &reg) != nil {
			reg.Projects = nil // Gemini CLI starts afresh from a corrupt registry too
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("gemini: %w", err)
	}
	if reg.Projects == nil {
		reg.Projects = map[string]string{}
	}
	bases := []string{filepath.Join(gdir, "tmp"), filepath.Join(gdir, "history")}
	owner := func(slug string) string {
		for _, b := range bases {
			if s, err := os.ReadFile(filepath.Join(b, slug, markerName)); err == nil {
				return strings.TrimSpace(string(s))
			}
		}
		return ""
	}
	if slug := reg.Projects[root]; slug != "" && validSlug(slug) {
		if o := owner(slug); o == "" || o == root {
			return slug, markProject(bases, slug, root)
		}
	}
	slug := ""
	if entries, err := os.ReadDir(bases[0]); err == nil {
		for _, e := range entries {
			if e.IsDir() && validSlug(e.Name()) && owner(e.Name()) == root {
				slug = e.Name()
				break
			}
		}
	}
	if slug == "" {
		taken := map[string]bool{}
		for p, s := range reg.Projects {
			if p != root {
				taken[s] = true
			}
		}
		slug = slugify(filepath.Base(root))
		for n := 1; taken[slug] || owner(slug) != "" && owner(slug) != root; n++ {
			slug = slugify(filepath.Base(root)) + "-" + strconv.Itoa(n)
		}
	}
	if err := markProject(bases, slug, root); err != nil {
		return "", err
	}
	reg.Projects[root] = slug
	b, _ := json.MarshalIndent(reg, "", "  ")
	tmp := regPath + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return "", fmt.Errorf("gemini: %w", err)
	}
	if err := os.Rename(tmp, regPath); err != nil {
		return "", fmt.Errorf("gemini: %w", err)
	}
	return slug, nil
}

// markProject writes the .project_root markers that say slug is root's.
func markProject(bases []string, slug, root string) error {
	for _, b := range bases {
		dir := filepath.Join(b, slug)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("gemini: %w", err)
		}
		m := filepath.Join(dir, markerName)
		if _, err := os.Stat(m); err == nil {
			continue
		}
		if err := os.WriteFile(m, []byte(root), 0o600); err != nil {
			return fmt.Errorf("gemini: %w", err)
		}
	}
	return nil
}

var (
	nonSlug   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]`) })
	dashes    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-+`) })
	slugShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`) })
)

func slugify(s string) string {
	s = strings.Trim(dashes().ReplaceAllString(nonSlug().ReplaceAllString(strings.ToLower(s), "-"), "-"), "-")
	if s == "" {
		return "project"
	}
	return s
}

// validSlug keeps a registry entry from naming a path outside tmp/.
func validSlug(s string) bool { return slugShape().MatchString(s) }
