package retention

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/safefile"
)

// gemini is Gemini CLI's retention, as its 0.61 release applies it
// (packages/cli/src/utils/sessionCleanup.ts): general.sessionRetention
// in its settings, merged over its defaults {enabled: true, maxAge:
// "30d", minRetention: "1d"} from the system defaults file, the user's
// settings.json and the system settings file, in that order. When it
// starts in a project, it deletes that project's chats (the files in
// tmp/<project>/chats/) last updated longer than maxAge ago (lastUpdated
// as the file records it), those past the maxCount newest, and files it
// cannot take for a session (no session id, no message it would resume,
// a sub-agent's), each with every chat of its short id. A setting it
// refuses (a maxAge that is not <number><h|d|w|m>, one below
// minRetention, a maxCount below 1, neither maxAge nor maxCount) turns
// the clean-up off.
type gemini struct{}

func (gemini) agent() string { return "gemini" }

// retentionSettings is general.sessionRetention as the settings files
// give it; a field not set is nil.
type retentionSettings struct {
	Enabled      *bool   `json:"enabled"`
	MaxAge       *string `json:"maxAge"`
	MaxCount     *int    `json:"maxCount"`
	MinRetention *string `json:"minRetention"`
}

// geminiFiles are the settings files Gemini CLI merges, in order.
func geminiFiles(pl Place) []string {
	system := filepath.Join(pl.System, "etc", "gemini-cli")
	switch runtime.GOOS {
	case "darwin":
		system = filepath.Join(pl.System, "Library", "Application Support", "GeminiCli")
	case "windows":
		system = filepath.Join(pl.System, "ProgramData", "gemini-cli")
	}
	settings := filepath.Join(system, "settings.json")
	if p := pl.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
		settings = p
	}
	defaults := filepath.Join(filepath.Dir(settings), "system-defaults.json")
	if p := pl.Getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"); p != "" {
		defaults = p
	}
	home := pl.Home
	if h := pl.Getenv("GEMINI_CLI_HOME"); h != "" {
		home = h
	}
	return []string{defaults, filepath.Join(home, ".gemini", "settings.json"), settings}
}

func (gemini) policy(pl Place) Policy {
	p := Policy{Agent: "gemini", Deletes: true, Setting: "general.sessionRetention",
		Since: "it was last updated, as its file records", When: "when Gemini CLI starts in the session's project"}
	on, maxAge, minRet := true, "30d", "1d"
	var maxCount *int
	for _, file := range geminiFiles(pl) {
		v, err := settingAt(file, "general", "sessionRetention")
		if err != nil {
			p.File, p.Problem = file, err.Error()
			return p
		}
		if v == nil {
			continue
		}
		var s retentionSettings
		if err := json.Unmarshal(v, &s); err != nil {
			p.File, p.Problem = file, fmt.Sprintf("general.sessionRetention: %v", err)
			return p
		}
		p.File = file
		if s.Enabled != nil {
			on = *s.Enabled
		}
		if s.MaxAge != nil {
			maxAge = *s.MaxAge
		}
		if s.MinRetention != nil {
			minRet = *s.MinRetention
		}
		if s.MaxCount != nil {
			maxCount = s.MaxCount
		}
	}
	if !on {
		p.Deletes = false
		p.When = "general.sessionRetention.enabled is false: Gemini CLI deletes no session"
		return p
	}
	if maxAge != "" {
		age, err := geminiPeriod(maxAge)
		if err != nil {
			p.Problem = "maxAge " + err.Error() + ": Gemini CLI skips its clean-up"
			return p
		}
		least, err := geminiPeriod(minRet)
		if err != nil {
			least = 24 * time.Hour // as Gemini CLI falls back
		}
		if age < least {
			p.Problem = fmt.Sprintf("maxAge %s is below minRetention %s: Gemini CLI skips its clean-up", maxAge, minRet)
			return p
		}
		p.MaxAge, p.MaxDays = age, days(age)
	}
	if maxCount != nil {
		if *maxCount < 1 {
			p.Problem = "maxCount is below 1: Gemini CLI skips its clean-up"
			return p
		}
		p.MaxCount = *maxCount
	}
	if p.MaxAge == 0 && p.MaxCount == 0 {
		p.Problem = "neither maxAge nor maxCount is set: Gemini CLI skips its clean-up"
	}
	return p
}

var geminiPeriodRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+)([dhwm])$`) })

// geminiPeriod parses a retention period as Gemini CLI does: a number
// above 0 and h, d, w or m (30 days).
func geminiPeriod(s string) (time.Duration, error) {
	m := geminiPeriodRE().FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not <number><h|d|w|m>", s)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not above 0", s)
	}
	unit := map[string]time.Duration{"h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour, "m": 30 * 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, nil
}

// geminiShortID is how Gemini CLI's clean-up reads a chat's short id
// from its name (SHORT_ID_REGEX in sessionCleanup.ts), for names that
// start session- and end .json or .jsonl.
var geminiShortID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-([a-zA-Z0-9]{8})\.jsonl?$`) })

// geminiChat: a file Gemini CLI's clean-up lists in chats/ (a name
// session-*.json or session-*.jsonl), as it sorts them.
func geminiChat(name string) bool {
	return strings.HasPrefix(name, "session-") && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonl"))
}

func shortID(name string) string {
	if !geminiChat(name) {
		return ""
	}
	if m := geminiShortID().FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// due mirrors cleanupExpiredSessions (Gemini CLI 0.61,
// packages/cli/src/utils/sessionCleanup.ts) in each project's chats/
// directory: every session-*.json[l] file is read as its
// getAllSessionFiles reads it; one it takes for no session (unreadable,
// no session id, no message it would resume, a sub-agent's) is deleted
// at once, one that is a session when it is older than maxAge or past
// the maxCount newest files; and each file it deletes that has a short
// id in its name takes with it every chat whose name ends in that short
// id. So a resume in a later minute than the session started, which
// writes a stub under the session's short id holding no message to
// resume, has the whole session deleted at the next start.
// count counts the sessions of cov's chats directories, as due does
// (the files of one session id are one), whatever the clean-up does.
func (g gemini) count(ctx context.Context, cov []importer.Coverage) (int, error) {
	_, n, err := g.due(ctx, Policy{}, cov, time.Now())
	return n, err
}

func (gemini) due(ctx context.Context, p Policy, cov []importer.Coverage, now time.Time) ([]Session, int, error) {
	byPath := map[string]importer.Coverage{}
	var dirs []string
	seen := map[string]bool{}
	for _, c := range cov {
		byPath[c.Bundle.Name()] = c
		if dir := filepath.Dir(c.Bundle.Name()); !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	var out []Session
	sessions := 0
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // gone since it was listed
		}
		type file struct {
			path, name string
			info       chatInfo
			at         time.Time // when Gemini CLI deletes it (zero: not due)
			why        string
		}
		var files []*file
		for _, e := range entries { // sorted by name, as Gemini CLI sorts them
			if !geminiChat(e.Name()) || e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			mtime := now
			if fi, err := e.Info(); err == nil {
				mtime = fi.ModTime()
			}
			info, err := readChat(path, mtime)
			if err != nil {
				continue // gone, or unreadable to loom too
			}
			if info.lastUpdated.IsZero() {
				info.lastUpdated = now // as Gemini CLI dates a chat that records no lastUpdated
			}
			files = append(files, &file{path: path, name: e.Name(), info: info})
		}
		ids := map[string]bool{}
		for _, f := range files {
			if f.info.invalid == "" && !ids[f.info.id] {
				ids[f.info.id] = true
				sessions++
			}
		}
		// Newest first, as Gemini CLI counts maxCount. Gemini CLI's
		// clean-up keeps one place fewer when the chat it starts has
		// its first message written by the time the clean-up reads the
		// directory (a race of its own, which the real Gemini CLI 0.61
		// in TestDoctorAgreesWithGemini loses: the new chat is not yet
		// counted). Doctor names what it deletes when it is not.
		valid := slices.Clone(files)
		valid = slices.DeleteFunc(valid, func(f *file) bool { return f.info.invalid != "" })
		slices.SortStableFunc(valid, func(a, b *file) int { return b.info.lastUpdated.Compare(a.info.lastUpdated) })
		for _, f := range files {
			if f.info.invalid != "" {
				f.at, f.why = now, f.info.invalid
			}
		}
		for i, f := range valid {
			switch {
			case p.MaxCount > 0 && i >= p.MaxCount:
				f.at, f.why = now, fmt.Sprintf("past the %d newest of its project", p.MaxCount)
			case p.MaxAge > 0:
				f.at, f.why = f.info.lastUpdated.Add(p.MaxAge), fmt.Sprintf("kept %s after it was last updated", periodWords(p.MaxAge))
			}
		}
		// The short id's clean-up: every file of a short id goes when
		// the first of them does.
		first := map[string]*file{}
		for _, f := range files {
			id := shortID(f.name)
			if id == "" || f.at.IsZero() {
				continue
			}
			if g := first[id]; g == nil || f.at.Before(g.at) {
				first[id] = f
			}
		}
		for _, f := range files {
			g := first[shortID(f.name)]
			if g == nil || g == f || (!f.at.IsZero() && !g.at.Before(f.at)) {
				continue
			}
			f.at, f.why = g.at, fmt.Sprintf("shares its short id %s with %s, which Gemini CLI deletes (%s), and its clean-up deletes every chat of that short id", shortID(f.name), g.name, g.why)
		}
		for _, f := range files {
			if f.at.IsZero() {
				continue
			}
			s := Session{Agent: "gemini", Path: f.path, Held: importer.HeldNone}
			if c, ok := byPath[f.path]; ok {
				s = session(c, f.at, f.info.lastUpdated, f.why)
			}
			s.DeletesAt, s.LastWritten, s.Why = f.at, f.info.lastUpdated, f.why
			if s.SourceID == "" {
				s.SourceID = f.info.id // the session's id, as an import records it
			}
			if _, ok := byPath[f.path]; !ok || !f.info.resumable {
				// Nothing in it to resume, or a file the import
				// does not read (a session-X.json beside the
				// session-X.jsonl Gemini CLI copied it into):
				// whether loom holds it is whether loom holds the
				// session it is a part of, from the files of that
				// session that hold messages (none: there is
				// nothing to lose, or nothing loom has).
				s.Held = importer.HeldWhole
				if f.info.resumable {
					s.Held = importer.HeldNone
				}
				some := false
				for _, g := range files {
					c, ok := byPath[g.path]
					if g == f || !ok || !g.info.resumable || g.info.id == "" || g.info.id != f.info.id {
						continue
					}
					if !some {
						s.Held, some = c.Held, true
					}
					s.Held = lessHeld(s.Held, c.Held)
					if s.SessionID == "" && c.SessionID != "" {
						s.SourceID, s.SessionID = c.SourceID, c.SessionID
					}
				}
			}
			out = append(out, s)
		}
	}
	return out, sessions, nil
}

// lessHeld is the less held of a and b.
func lessHeld(a, b importer.Held) importer.Held {
	rank := map[importer.Held]int{importer.HeldNone: 0, importer.HeldBehind: 1, importer.HeldWhole: 2}
	if rank[b] < rank[a] {
		return b
	}
	return a
}

func periodWords(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return DayWords(days(d))
	}
	return d.String()
}

// chatInfo is what Gemini CLI's clean-up reads of a chat file.
type chatInfo struct {
	// id is the session's id.
	id          string
	lastUpdated time.Time
	// invalid says why Gemini CLI deletes the file at its next start,
	// whatever its age (it takes it for no session of its own).
	invalid string
	// resumable: the file holds a message Gemini CLI would resume (a
	// user's that is not a command or context it adds itself, a
	// model's with text, tool calls or thoughts).
	resumable bool
	// subagent: a sub-agent's file, a part of a session and not one.
	subagent bool
}

// maxChat bounds a chat file read for its times.
const maxChat = 256 << 20

// readChat reads a chat file as Gemini CLI's loadConversationRecord
// reads it for its clean-up (metadataOnly): JSON lines of records (a
// message has a string id, $set updates the metadata and may replace
// the messages, $rewindTo drops the messages from one on, a record with
// a string sessionId and projectHash is the metadata); without a
// session id and project hash so found, the file as one JSON document
// (its older form). lastUpdated is zero when the JSON lines record
// none (Gemini CLI takes the time it reads it); in the older form,
// its start, else the file's modification time mtime.
func readChat(path string, mtime time.Time) (chatInfo, error) {
	f, _, err := safefile.Open(path, maxChat)
	if err != nil {
		return chatInfo{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxChat))
	if err != nil {
		return chatInfo{}, err
	}
	meta := map[string]json.RawMessage{}
	type kindOf struct {
		id        string
		resumable bool
	}
	var msgs []kindOf
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var rec map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &rec) != nil || rec == nil {
			continue
		}
		if to, ok := jsonString(rec["$rewindTo"]); ok {
			i := slices.IndexFunc(msgs, func(m kindOf) bool { return m.id == to })
			if i < 0 {
				i = 0
			}
			msgs = msgs[:i]
			continue
		}
		if id, ok := jsonString(rec["id"]); ok {
			msgs = append(msgs, kindOf{id, resumableMessage(rec)})
			continue
		}
		var set map[string]json.RawMessage
		if json.Unmarshal(rec["$set"], &set) == nil && set != nil {
			var list []map[string]json.RawMessage
			if json.Unmarshal(set["messages"], &list) == nil && list != nil {
				msgs = msgs[:0]
				for _, m := range list {
					if id, ok := jsonString(m["id"]); ok {
						msgs = append(msgs, kindOf{id, resumableMessage(m)})
					}
				}
			}
			maps.Copy(meta, set)
			continue
		}
		_, isID := jsonString(rec["sessionId"])
		_, isHash := jsonString(rec["projectHash"])
		if isID && isHash {
			maps.Copy(meta, rec)
			var list []map[string]json.RawMessage
			if json.Unmarshal(rec["messages"], &list) == nil {
				for _, m := range list {
					if id, ok := jsonString(m["id"]); ok {
						msgs = append(msgs, kindOf{id, resumableMessage(m)})
					}
				}
			}
		}
	}
	var info chatInfo
	id, _ := jsonString(meta["sessionId"])
	hash, _ := jsonString(meta["projectHash"])
	if id != "" && hash != "" {
		info.id = id
		info.resumable = slices.ContainsFunc(msgs, func(m kindOf) bool { return m.resumable })
		if s, ok := jsonString(meta["lastUpdated"]); ok {
			info.lastUpdated, _ = time.Parse(time.RFC3339Nano, s)
		}
	} else {
		// The older form: one JSON document with a session id.
		var doc map[string]json.RawMessage
		if json.Unmarshal(data, &doc) != nil || doc == nil {
			info.invalid = "no session id that Gemini CLI reads: deleted at its next start in the project"
			return info, nil
		}
		if _, ok := doc["sessionId"]; !ok {
			info.invalid = "no session id that Gemini CLI reads: deleted at its next start in the project"
			return info, nil
		}
		meta = doc
		info.id, _ = jsonString(doc["sessionId"])
		var list []map[string]json.RawMessage
		json.Unmarshal(doc["messages"], &list)
		info.resumable = slices.ContainsFunc(list, resumableMessage)
		info.lastUpdated = mtime
		for _, k := range []string{"lastUpdated", "startTime"} {
			if s, ok := jsonString(doc[k]); ok && s != "" {
				info.lastUpdated, _ = time.Parse(time.RFC3339Nano, s)
				break
			}
		}
	}
	kind, _ := jsonString(meta["kind"])
	switch {
	case info.id == "":
		info.invalid = "no session id that Gemini CLI reads: deleted at its next start in the project"
	case !info.resumable:
		info.invalid = "no message Gemini CLI would resume: deleted at its next start in the project"
	case kind == "subagent":
		info.subagent = true
		info.invalid = "a sub-agent's file in chats/: deleted at Gemini CLI's next start in the project"
	}
	return info, nil
}

func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// resumableMessage is Gemini CLI's isResumableMessageRecord: a user's
// message whose text, trimmed, is not empty and starts with none of /,
// ?, <session_context>, <hook_context>; a model's with text, tool calls
// or thoughts.
func resumableMessage(m map[string]json.RawMessage) bool {
	typ, _ := jsonString(m["type"])
	text := strings.TrimSpace(partsText(m["content"]))
	switch typ {
	case "user":
		return text != "" && !strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "?") &&
			!strings.HasPrefix(text, "<session_context>") && !strings.HasPrefix(text, "<hook_context>")
	case "gemini":
		var calls, thoughts []json.RawMessage
		json.Unmarshal(m["toolCalls"], &calls)
		json.Unmarshal(m["thoughts"], &thoughts)
		return text != "" || len(calls) > 0 || len(thoughts) > 0
	}
	return false
}

// partsText is a message's content as text, as Gemini CLI's
// partListUnionToString gives it: a string itself, a part's text, the
// parts of a list joined; a part of another kind (a function call, a
// file) as a non-empty placeholder.
func partsText(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && list != nil {
		var b strings.Builder
		for _, p := range list {
			b.WriteString(partsText(p))
		}
		return b.String()
	}
	var part map[string]json.RawMessage
	if json.Unmarshal(raw, &part) != nil || part == nil {
		return ""
	}
	if t, ok := part["text"]; ok {
		s, _ := jsonString(t)
		return s
	}
	if len(part) == 0 {
		return ""
	}
	return "[part]"
}
