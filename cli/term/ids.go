package term

import (
	"fmt"
	"slices"
	"time"

	"github.com/loomhq/loom"
)

// ShortIDLen is how much of an id a terminal table shows: enough to be a
// unique prefix in any realistic store, and accepted back as a reference.
const ShortIDLen = 8

// DisplayID shortens an id on a terminal and keeps it whole otherwise, so
// scripts always get full ids.
func DisplayID(ios *IOStreams, id string) string {
	return AbbrevID(ios, id, ShortIDLen)
}

// AbbrevID shortens id to n characters on a terminal.
func AbbrevID(ios *IOStreams, id string, n int) string {
	if ios.IsStdoutTTY() && len(id) > n {
		return id[:n]
	}
	return id
}

// AbbrevLen returns the shortest prefix length, at least ShortIDLen,
// that tells ids apart. Time-ordered ids made within the same minute
// share their first 8 characters, and a shown prefix must work as a
// reference.
func AbbrevLen(ids []string) int {
	n := ShortIDLen
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

// DisplayTime shows a time as an age on a terminal and as RFC 3339 when
// piped.
func DisplayTime(ios *IOStreams, t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	if ios.IsStdoutTTY() {
		return ShortAgo(now, t)
	}
	return loom.FormatTime(t)
}

// ShortAgo is human.Ago in few columns, for tables.
func ShortAgo(now, t time.Time) string {
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
