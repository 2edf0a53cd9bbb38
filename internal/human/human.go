// Package human writes counts, costs, durations and usage the way loom
// shows them to people, so that the command line and the Markdown export
// say the same thing the same way.
package human

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// Plural writes n with thousands separators and unit, in the plural
// unless n is 1: "1 turn", "1,300 calls".
func Plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return Count(int64(n)) + " " + unit + "s"
}

// Count writes n with thousands separators.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Cost writes a USD amount with enough digits for small costs.
func Cost(c float64) string {
	c = loom.RoundCost(c)
	switch {
	case c == 0:
		return "$0"
	case c < 0.000001:
		return "<$0.000001"
	case c < 0.01:
		// Two significant digits: $0.0004, $0.000037; never $0.0000.
		digits := int(math.Ceil(-math.Log10(c))) + 1
		return "$" + strings.TrimRight(strconv.FormatFloat(c, 'f', digits, 64), "0")
	default:
		return fmt.Sprintf("$%.2f", c)
	}
}

// UnknownCost is what a cost that is not known reads as.
const UnknownCost = "—"

// HasTokens reports whether u counts any token: input, output,
// reasoning, cache read or cache write.
func HasTokens(u loom.Usage) bool {
	return u.InputTokens != 0 || u.OutputTokens != 0 || u.ReasoningTokens != 0 || u.CacheReadTokens != 0 || u.CacheWriteTokens != 0
}

// CostKnown reports whether u's cost is known. Usage with tokens and a
// cost of zero is of a model the price table does not know (a local
// model, an imported session's model without a price): its cost is
// unknown, not free. Usage without tokens cost nothing.
func CostKnown(u loom.Usage) bool {
	return u.CostUSD != 0 || !HasTokens(u)
}

// UsageCost writes the cost of u as Cost does, or UnknownCost when it is
// not known (CostKnown). Every cost shown to people goes through it.
func UsageCost(u loom.Usage) string {
	if !CostKnown(u) {
		return UnknownCost
	}
	return Cost(u.CostUSD)
}

// Duration writes a tool's run time compactly.
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

// Minutes writes a number of minutes as 2h05m, or 40m under an hour.
func Minutes(m int64) string {
	if m < 60 {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

// Usage writes a usage total on one line, its cost as UsageCost does.
func Usage(u loom.Usage) string {
	parts := []string{Count(u.InputTokens) + " in", Count(u.OutputTokens) + " out"}
	if u.ReasoningTokens > 0 {
		parts = append(parts, Count(u.ReasoningTokens)+" reasoning")
	}
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		parts = append(parts, fmt.Sprintf("%s cache read, %s cache write", Count(u.CacheReadTokens), Count(u.CacheWriteTokens)))
	}
	parts = append(parts, UsageCost(u))
	if u.APICalls > 0 {
		parts = append(parts, Plural(int(u.APICalls), "call"))
	}
	return strings.Join(parts, " · ")
}

// OneLine flattens s to one line, for a table cell or a heading.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// Ago says how long ago t was, in the largest whole unit: "3 minutes
// ago".
func Ago(now, t time.Time) string { return ago(now, t, false) }

// ShortAgo is Ago in few columns, for tables: "3m ago".
func ShortAgo(now, t time.Time) string { return ago(now, t, true) }

func ago(now, t time.Time, short bool) string {
	d := now.Sub(t)
	in := func(unit time.Duration, name string) string {
		if short {
			return fmt.Sprintf("%d%c ago", int(d/unit), name[0])
		}
		return Plural(int(d/unit), name) + " ago"
	}
	switch {
	case d < 0:
		return t.Local().Format("Jan 2 15:04")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return in(time.Minute, "minute")
	case d < 24*time.Hour:
		return in(time.Hour, "hour")
	case d < 30*24*time.Hour:
		return in(24*time.Hour, "day")
	case d < 365*24*time.Hour:
		return t.Local().Format("Jan 2")
	case short:
		return t.Local().Format("Jan 2006")
	default:
		return t.Local().Format("Jan 2, 2006")
	}
}

// FirstLine returns the first non-empty line of s, trimmed.
func FirstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// Percent writes a share from 0 to 1 as a percentage: 0%, <0.1%, 2.7%,
// 16%.
func Percent(f float64) string {
	switch {
	case f == 0:
		return "0%"
	case f < 0.001:
		return "<0.1%"
	case f < 0.1:
		return fmt.Sprintf("%.1f%%", f*100)
	}
	return fmt.Sprintf("%.0f%%", f*100)
}

// Span writes a time span in seconds as people read one: 45s, 12m, 3h,
// 3h 20m or 2d 4h; — for none.
func Span(sec float64) string {
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	switch {
	case d <= 0:
		return "—"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour && int(d.Minutes())%60 == 0:
		return fmt.Sprintf("%dh", int(d.Hours()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}
