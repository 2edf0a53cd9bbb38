package term

import (
	"slices"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
)

// ShortIDLen is the least of an id a terminal shows (loom.ShortIDLen);
// AbbrevLen and loom.RefLen make it longer where other ids share it.
const ShortIDLen = loom.ShortIDLen

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
		return human.ShortAgo(now, t)
	}
	return loom.FormatTime(t)
}
