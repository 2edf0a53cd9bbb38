package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
)

// shortIDLen is how much of an id a terminal table shows: enough to be a
// unique prefix in any realistic store, and accepted back as a reference.
const shortIDLen = 8

// displayID shortens an id on a terminal and keeps it whole otherwise, so
// scripts always get full ids.
func displayID(ios *IOStreams, id string) string {
	return abbrevID(ios, id, shortIDLen)
}

// abbrevID shortens id to n characters on a terminal.
func abbrevID(ios *IOStreams, id string, n int) string {
	if ios.IsStdoutTTY() && len(id) > n {
		return id[:n]
	}
	return id
}

// abbrevLen returns the shortest prefix length, at least shortIDLen,
// that tells ids apart. Time-ordered ids made within the same minute
// share their first 8 characters, and a shown prefix must work as a
// reference.
func abbrevLen(ids []string) int {
	n := shortIDLen
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		a, b := sorted[i-1], sorted[i]
		if a == b {
			continue
		}
		common := 0
		for common < len(a) && common < len(b) && a[common] == b[common] {
			common++
		}
		n = max(n, common+1)
	}
	return n
}

// displayTime shows a time as an age on a terminal and as RFC 3339 when
// piped.
func displayTime(ios *IOStreams, t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	if ios.IsStdoutTTY() {
		return shortAgo(now, t)
	}
	return loom.FormatTime(t)
}

// shortAgo is fuzzyAgo in few columns, for tables.
func shortAgo(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.Local().Format("Jan 2 15:04")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	case d < 365*24*time.Hour:
		return t.Local().Format("Jan 2")
	default:
		return t.Local().Format("Jan 2006")
	}
}

// fuzzyAgo says how long ago t was, in the largest whole unit.
func fuzzyAgo(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.Local().Format("Jan 2 15:04")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	case d < 30*24*time.Hour:
		return plural(int(d/(24*time.Hour)), "day") + " ago"
	case d < 365*24*time.Hour:
		return t.Local().Format("Jan 2")
	default:
		return t.Local().Format("Jan 2, 2006")
	}
}

func plural(n int, unit string) string { return human.Plural(n, unit) }

// firstLine returns the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:n])
	}
	return string(r[:n-1]) + "…"
}

// parseDuration reads an age like 30d, 12h, 2w or 1d12h: numbers each
// followed by a unit of s, m, h, d (24 hours) or w (7 days).
func parseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	for in != "" {
		i := 0
		for i < len(in) && (in[i] >= '0' && in[i] <= '9' || in[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("invalid duration %q: want a number and a unit, like 30d, 12h or 2w", s)
		}
		n, err := strconv.ParseFloat(in[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		j := i
		for j < len(in) && unicode.IsLetter(rune(in[j])) {
			j++
		}
		var unit time.Duration
		switch in[i:j] {
		case "s":
			unit = time.Second
		case "m":
			unit = time.Minute
		case "h":
			unit = time.Hour
		case "d":
			unit = 24 * time.Hour
		case "w":
			unit = 7 * 24 * time.Hour
		default:
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use s, m, h, d or w)", s, in[i:j])
		}
		total += time.Duration(n * float64(unit))
		in = in[j:]
	}
	return total, nil
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// formatCount writes n with thousands separators.
func formatCount(n int64) string { return human.Count(n) }

// formatCost writes a USD amount with enough digits for small costs.
func formatCost(c float64) string { return human.Cost(c) }

// formatDuration writes a tool's run time compactly.
func formatDuration(d time.Duration) string { return human.Duration(d) }

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
