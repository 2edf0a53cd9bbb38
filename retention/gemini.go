package retention

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
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
// cannot take for a session (no session id, a sub-agent's). A setting it
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

func (gemini) due(ctx context.Context, p Policy, cov []importer.Coverage, now time.Time) ([]Session, int, error) {
	type file struct {
		c    importer.Coverage
		info chatInfo
	}
	byDir := map[string][]file{}
	var dirs []string
	sessions := 0
	for _, c := range cov {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		info, err := readChat(c.Bundle.Name(), c.ModTime)
		if err != nil {
			continue // gone, or unreadable to loom too
		}
		if info.empty {
			continue // nothing in it to lose
		}
		if !info.subagent {
			sessions++
		}
		dir := filepath.Dir(c.Bundle.Name())
		if _, ok := byDir[dir]; !ok {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], file{c, info})
	}
	var out []Session
	for _, dir := range dirs {
		files := byDir[dir]
		// Newest first, as Gemini CLI counts maxCount.
		slices.SortStableFunc(files, func(a, b file) int { return b.info.lastUpdated.Compare(a.info.lastUpdated) })
		// Gemini CLI's clean-up keeps one place fewer when the chat it
		// starts has its first message written by the time the
		// clean-up reads the directory (a race of its own, which the
		// real Gemini CLI 0.61 in TestDoctorAgreesWithGemini loses:
		// the new chat is not yet counted). Doctor names what it
		// deletes when it is not.
		valid := 0
		for _, f := range files {
			last := f.info.lastUpdated
			switch {
			case f.info.invalid != "":
				out = append(out, session(f.c, now, last, f.info.invalid))
				continue
			case p.MaxCount > 0 && valid >= p.MaxCount:
				out = append(out, session(f.c, now, last, fmt.Sprintf("past the %d newest of its project", p.MaxCount)))
			case p.MaxAge > 0:
				out = append(out, session(f.c, last.Add(p.MaxAge), last, fmt.Sprintf("kept %s after it was last updated", periodWords(p.MaxAge))))
			}
			valid++
		}
	}
	return out, sessions, nil
}

func periodWords(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return DayWords(days(d))
	}
	return d.String()
}

// chatInfo is what Gemini CLI's clean-up reads of a chat file.
type chatInfo struct {
	lastUpdated time.Time
	// invalid says why Gemini CLI deletes the file at its next start,
	// whatever its age (it takes it for no session of its own).
	invalid string
	// empty: the file holds no message.
	empty bool
	// subagent: a sub-agent's file, a part of a session and not one.
	subagent bool
}

// maxChat bounds a chat file read for its times.
const maxChat = 256 << 20

// readChat reads a chat file, one JSON document or JSON lines, for the
// session's id, kind and lastUpdated (the last one set wins, as Gemini
// CLI's metadata records set it; without one, its start, else the
// file's modification time mtime).
func readChat(path string, mtime time.Time) (chatInfo, error) {
	f, _, err := safefile.Open(path, maxChat)
	if err != nil {
		return chatInfo{}, err
	}
	defer f.Close()
	var info chatInfo
	var id, kind, updated, started string
	messages := 0
	dec := json.NewDecoder(f)
	for {
		var rec struct {
			SessionID   *string `json:"sessionId"`
			Kind        *string `json:"kind"`
			LastUpdated *string `json:"lastUpdated"`
			StartTime   *string `json:"startTime"`
			Type        string  `json:"type"`
			ID          string  `json:"id"`
			Messages    []struct {
				Type string `json:"type"`
			} `json:"messages"`
			Set *struct {
				LastUpdated *string `json:"lastUpdated"`
				Messages    []any   `json:"messages"`
			} `json:"$set"`
		}
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// What does not parse ends what can be read, as for a
			// document cut short.
			break
		}
		switch {
		case rec.Set != nil:
			if rec.Set.LastUpdated != nil {
				updated = *rec.Set.LastUpdated
			}
			if rec.Set.Messages != nil {
				messages = len(rec.Set.Messages)
			}
		case rec.Type != "" && rec.ID != "":
			messages++
		default:
			if rec.SessionID != nil {
				id = *rec.SessionID
			}
			if rec.Kind != nil {
				kind = *rec.Kind
			}
			if rec.LastUpdated != nil {
				updated = *rec.LastUpdated
			}
			if rec.StartTime != nil {
				started = *rec.StartTime
			}
			messages += len(rec.Messages)
		}
	}
	info.empty = messages == 0
	switch {
	case id == "":
		info.invalid = "no session id that Gemini CLI reads: deleted at its next start in the project"
	case kind == "subagent":
		info.subagent = true
		info.invalid = "a sub-agent's file in chats/: deleted at Gemini CLI's next start in the project"
	}
	info.lastUpdated = mtime
	for _, s := range []string{updated, started} {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			info.lastUpdated = t
			break
		}
	}
	return info, nil
}
