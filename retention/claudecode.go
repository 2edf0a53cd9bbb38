package retention

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/loomhq/loom/importer"
)

// claudeCode is Claude Code's retention, as its 2.1 releases apply it:
// at each start it deletes every session file under projects/ (of every
// project) whose modification time is older than cleanupPeriodDays
// (default 30; a whole number, 1 or more: any other value is a settings
// error, and Claude Code skips its clean-up while there is one). The
// organisation's managed settings win over the user's.
type claudeCode struct{}

// claudeDefaultDays is Claude Code's cleanupPeriodDays when none is set.
const claudeDefaultDays = 30

func (claudeCode) agent() string { return "claude-code" }

// claudeManaged is where Claude Code reads the managed settings of the
// machine, under pl.System.
func claudeManaged(pl Place) string {
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(pl.System, "Library", "Application Support", "ClaudeCode", "managed-settings.json")
	case "windows":
		return filepath.Join(pl.System, "Program Files", "ClaudeCode", "managed-settings.json")
	}
	return filepath.Join(pl.System, "etc", "claude-code", "managed-settings.json")
}

func (claudeCode) policy(pl Place) Policy {
	p := Policy{Agent: "claude-code", Deletes: true, Setting: "cleanupPeriodDays",
		Since: "its file was last written", When: "at each start of Claude Code, in every project", MaxAge: claudeDefaultDays * 24 * time.Hour}
	user := filepath.Join(importer.ToolDir(pl.Getenv, pl.Home, "CLAUDE_CONFIG_DIR", ".claude"), "settings.json")
	for _, file := range []string{claudeManaged(pl), user} {
		v, err := settingAt(file, "cleanupPeriodDays")
		if err != nil {
			p.File, p.Problem = file, err.Error()
			return p
		}
		if v == nil {
			continue
		}
		p.File = file
		var n float64
		if json.Unmarshal(v, &n) != nil || n < 1 || n != math.Trunc(n) || n > 1e6 {
			p.Problem = fmt.Sprintf("cleanupPeriodDays is %s, not a whole number of days, 1 or more: Claude Code reports a settings error and skips its clean-up while it is so", v)
			return p
		}
		p.MaxAge = time.Duration(n) * 24 * time.Hour
		break
	}
	p.MaxDays = days(p.MaxAge)
	return p
}

func (claudeCode) due(ctx context.Context, p Policy, cov []importer.Coverage, now time.Time) ([]Session, int, error) {
	var out []Session
	why := "kept " + DayWords(p.MaxDays) + " after it was last written"
	for _, c := range cov {
		fi, err := os.Stat(c.Bundle.Name())
		if err != nil {
			continue
		}
		last := fi.ModTime()
		out = append(out, session(c, last.Add(p.MaxAge), last, why))
	}
	return out, len(cov), nil
}

// settingAt is the value of the top-level key of the JSON settings file
// at path (comments allowed); nil when the file or the key is not
// there. A file that cannot be read or parsed is an error.
func settingAt(path string, key ...string) (json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var v json.RawMessage = stripComments(b)
	for _, k := range key {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(v, &obj); err != nil {
			return nil, fmt.Errorf("%s: not a JSON object: %v", path, err)
		}
		if v = obj[k]; v == nil {
			return nil, nil
		}
	}
	return v, nil
}

// stripComments takes // and /* */ comments out of b, outside strings:
// the agents' settings files may hold them (their parsers accept them).
func stripComments(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			i += 2
			for i+1 < len(b) && !(b[i] == '*' && b[i+1] == '/') {
				i++
			}
			i++
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}
