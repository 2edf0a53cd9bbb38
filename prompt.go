package loom

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// MaxPrompt bounds a session's last_prompt: enough to recognise a session
// in a list.
const MaxPrompt = 500

// MaxTitle bounds a title made from a first prompt.
const MaxTitle = 60

// Truncate trims s and cuts it to n characters, ending with "…" when cut.
func Truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// TruncateBytes cuts s to at most n bytes, at a rune boundary, ending
// with "…" when cut; "" when n leaves no room for more than the mark.
// It bounds text by its size (a recalled turn, what a model is sent),
// where Truncate bounds it by its characters.
func TruncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= len("…") {
		return ""
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// TitleFrom makes a session title from its first prompt: the first line,
// with runs of spaces folded, cut at a word boundary to MaxTitle, as
// valid text (ValidTitle): a NUL byte or invalid UTF-8 becomes U+FFFD.
func TitleFrom(prompt string) string {
	prompt = strings.ReplaceAll(strings.ToValidUTF8(prompt, "\uFFFD"), "\x00", "\uFFFD")
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) <= MaxTitle {
		return line
	}
	r := []rune(line)[:MaxTitle-1]
	if i := strings.LastIndexByte(string(r), ' '); i > MaxTitle/2 {
		return string(r)[:i] + "…"
	}
	return string(r) + "…"
}

// AssignPartIDs gives every part of m that has none a new id.
func (m *Message) AssignPartIDs() {
	for i := range m.Parts {
		if m.Parts[i].ID == "" {
			m.Parts[i].ID = NewID()
		}
	}
}

// RepairInterrupted marks m's unfinished tool parts (pending or running:
// their process died) as errors with Interrupted, and returns how many it
// changed.
func (m *Message) RepairInterrupted(now time.Time) int {
	n := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type != PartTool || (p.Status != ToolPending && p.Status != ToolRunning) {
			continue
		}
		p.Status, p.Error = ToolError, Interrupted
		if p.EndedAt == nil {
			t := now
			p.EndedAt = &t
		}
		n++
	}
	return n
}

// forkSuffix is the " (fork)", " (fork N)", " (rewound)" or " (rewound N)"
// that ends a default fork title, compiled when first used: most
// processes never name a fork.
var forkSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(` \((?:fork|rewound)(?: [0-9]+)?\)$`)
})

// ForkTitleBase is what a fork's default title is made from: the parent's
// title without its own fork suffix, so a fork of "plan (fork)" is
// "plan (fork 2)", not "plan (fork) (fork)".
func ForkTitleBase(parent string) string {
	return forkSuffix().ReplaceAllString(parent, "")
}

// SplitForkTitle splits a default fork title into its parent's title and
// the words of its suffix: "plan (fork 2)" is "plan" and "fork 2", "plan
// (rewound)" is "plan" and "rewound". A title without a fork suffix is
// itself and "".
func SplitForkTitle(title string) (base, mark string) {
	loc := forkSuffix().FindStringIndex(title)
	if loc == nil {
		return title, ""
	}
	return title[:loc[0]], title[loc[0]+2 : len(title)-1]
}

// ForkTitle returns the default title of a fork of a session titled
// parent: "T (fork)", else "T (fork N)" with the smallest N from 2 that
// no title in taken has, compared case-insensitively as references are.
// taken holds the user's titles that start with ForkTitleBase(parent);
// other titles do not matter. An untitled parent gives an untitled fork.
func ForkTitle(parent string, taken []string) string {
	return suffixedTitle(parent, "fork", taken)
}

// RewoundTitle is ForkTitle for the fork a rewind moves later turns to:
// "T (rewound)", else "T (rewound N)".
func RewoundTitle(parent string, taken []string) string {
	return suffixedTitle(parent, "rewound", taken)
}

func suffixedTitle(parent, word string, taken []string) string {
	base := ForkTitleBase(parent)
	if base == "" {
		return ""
	}
	used := make(map[string]bool, len(taken))
	for _, t := range taken {
		used[strings.ToLower(t)] = true
	}
	title := base + " (" + word + ")"
	for n := 2; used[strings.ToLower(title)]; n++ {
		title = fmt.Sprintf("%s (%s %d)", base, word, n)
	}
	return title
}
