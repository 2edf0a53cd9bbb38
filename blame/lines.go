package blame

import (
	"strconv"
	"strings"

	"github.com/loomhq/loom"
)

// LineRange is the lines From to To of a file, counted from 1; the
// zero LineRange is every line.
type LineRange struct{ From, To int }

// ParseLines reads one line ("42") or a range of lines ("40-60"),
// spaces around the numbers allowed; "" is every line. ok is false when
// s is neither: the caller says what it expected.
func ParseLines(s string) (r LineRange, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return LineRange{}, true
	}
	a, b, isRange := strings.Cut(s, "-")
	from, err1 := strconv.Atoi(strings.TrimSpace(a))
	to := from
	var err2 error
	if isRange {
		to, err2 = strconv.Atoi(strings.TrimSpace(b))
	}
	if err1 != nil || err2 != nil || from < 1 || to < from {
		return LineRange{}, false
	}
	return LineRange{from, to}, true
}

// Keep keeps the lines of r that lr names, as many of them as the file
// has; lr naming no line the file has is an error (EINVALID).
func (r *Result) Keep(lr LineRange) error {
	if lr.From < 1 {
		return nil
	}
	if lr.From > len(r.Lines) {
		return loom.Errorf(loom.EINVALID, "%s has %d lines: there is no line %d", r.Path, len(r.Lines), lr.From)
	}
	r.Lines = r.Lines[lr.From-1 : min(lr.To, len(r.Lines))]
	return nil
}
