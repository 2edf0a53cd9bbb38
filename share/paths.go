package share

import (
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Hider finds, and on request replaces, what a shared session says of
// the machine it was made on: absolute paths, home directories and
// usernames.
type Hider struct {
	// Root is the project root, replaced by "<project>".
	Root string
	// Users are the local usernames, replaced by "<user>" where they
	// stand as words.
	Users []string
	// Homes are the home directories of the user running loom, as the
	// system and $HOME name them, replaced by "~" whatever their path
	// (/root, a home outside /home and /Users), not only where
	// homePath recognises one.
	Homes []string

	res   []*regexp.Regexp // Users as whole words, made on first use
	homes []*regexp.Regexp // Homes, each followed by the end of a path segment
	// forms are the other spellings of Root and Homes that agents write
	// (pathForms), each with what replaces it, longest first; made on
	// first use for formsOf.
	forms   []pathForm
	formsOf string
}

// pathForm is one spelling of a path and what replaces it.
type pathForm struct{ text, with string }

// pathForms are the spellings of the absolute path p that agents write
// besides p itself: Claude Code's project folder (every character but
// ASCII letters and digits as "-": /home/me/src/api is
// -home-me-src-api), a file: URL's percent-escaped path, and a JSON
// string's escapes (a backslash doubled, "/" as "\/"). Each is a form
// only where it differs from p.
func pathForms(p string) []string {
	var out []string
	add := func(f string) {
		if f != p && f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	// Claude Code replaces each UTF-16 unit that is not an ASCII
	// letter or digit: a letter beyond the BMP is two dashes.
	var enc strings.Builder
	for _, c := range p {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			enc.WriteRune(c)
		case c > 0xFFFF:
			enc.WriteString("--")
		default:
			enc.WriteByte('-')
		}
	}
	add(enc.String())
	add((&url.URL{Path: filepath.ToSlash(p)}).EscapedPath())
	add(strings.ReplaceAll(p, `\`, `\\`))
	add(strings.ReplaceAll(p, "/", `\/`))
	return out
}

// spellings returns the other forms of Root ("<project>") and of Homes
// ("~") that Hide replaces, longest first.
func (h *Hider) spellings() []pathForm {
	key := h.Root + "\x00" + strings.Join(h.Homes, "\x00")
	if h.forms != nil && h.formsOf == key {
		return h.forms
	}
	h.forms, h.formsOf = []pathForm{}, key
	if h.Root != "" {
		for _, f := range pathForms(h.Root) {
			h.forms = append(h.forms, pathForm{f, "<project>"})
		}
	}
	for _, d := range h.Homes {
		for _, f := range pathForms(d) {
			h.forms = append(h.forms, pathForm{f, "~"})
		}
	}
	slices.SortStableFunc(h.forms, func(a, b pathForm) int { return len(b.text) - len(a.text) })
	return h.forms
}

// homeREs returns the patterns of Homes: each home followed by a
// separator, a character that cannot be in a name, or the end, so that
// /rootfs is not /root.
func (h *Hider) homeREs() []*regexp.Regexp {
	if len(h.homes) != len(h.Homes) {
		h.homes = h.homes[:0]
		for _, d := range h.Homes {
			h.homes = append(h.homes, regexp.MustCompile(regexp.QuoteMeta(d)+`([^A-Za-z0-9._@+~-]|$)`))
		}
	}
	return h.homes
}

// userREs returns the patterns of Users.
func (h *Hider) userREs() []*regexp.Regexp {
	if len(h.res) != len(h.Users) {
		h.res = h.res[:0]
		for _, u := range h.Users {
			h.res = append(h.res, regexp.MustCompile(`\b`+regexp.QuoteMeta(u)+`\b`))
		}
	}
	return h.res
}

// NewHider returns the Hider of this machine for a session of the
// project at root: the user running loom is the username to find.
func NewHider(root string) *Hider {
	h := &Hider{Root: filepath.Clean(root)}
	if root == "" || h.Root == "/" || h.Root == "." {
		h.Root = ""
	}
	add := func(name string) {
		if len(name) >= 3 && !commonWords[strings.ToLower(name)] && !slices.Contains(h.Users, name) {
			h.Users = append(h.Users, name)
		}
	}
	home := func(d string) {
		if d == "" || !filepath.IsAbs(d) {
			return
		}
		if d = filepath.Clean(d); d != filepath.Dir(d) && !slices.Contains(h.Homes, d) {
			h.Homes = append(h.Homes, d)
		}
	}
	if u, err := user.Current(); err == nil {
		add(u.Username)
		add(filepath.Base(u.HomeDir))
		home(u.HomeDir)
	}
	add(os.Getenv("USER"))
	add(os.Getenv("USERNAME"))
	d, _ := os.UserHomeDir()
	home(d)
	home(os.Getenv("HOME"))
	// The longest first: a home inside another is replaced whole.
	slices.SortFunc(h.Homes, func(a, b string) int { return len(b) - len(a) })
	return h
}

// commonWords are names of accounts that are also words of ordinary
// text: replacing them everywhere would mangle the session.
var commonWords = map[string]bool{"root": true, "user": true, "admin": true, "local": true, "home": true, "users": true, "test": true, "dev": true, "runner": true, "ubuntu": true, "app": true}

var (
	// homePath matches a home directory: /home/NAME, /Users/NAME,
	// C:\Users\NAME; group 1 is the name.
	homePath = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:/home/|/Users/|[A-Za-z]:\\Users\\)([A-Za-z0-9._-]+)`)
	})
	// absPath matches an absolute path of two segments or more, not
	// inside a URL (a path starts after a space, a quote or a bracket).
	absPath = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[\s"'=(\[,])((?:/[A-Za-z0-9._@+~-]+){2,}/?|[A-Za-z]:\\(?:[A-Za-z0-9._@+~ -]+\\?){1,})`)
	})
)

// Hide replaces the project root by "<project>", every home directory
// by "~" and the usernames by "<user>" in s, and says how many it
// replaced.
func (h *Hider) Hide(s string) (string, int) {
	n := 0
	if h.Root != "" && strings.Contains(s, h.Root) {
		n += strings.Count(s, h.Root)
		s = strings.ReplaceAll(s, h.Root, "<project>")
	}
	for _, f := range h.spellings() {
		if c := strings.Count(s, f.text); c > 0 {
			n += c
			s = strings.ReplaceAll(s, f.text, f.with)
		}
	}
	for _, re := range h.homeREs() {
		n += len(re.FindAllStringIndex(s, -1))
		s = re.ReplaceAllString(s, "~${1}")
	}
	s = homePath().ReplaceAllStringFunc(s, func(string) string { n++; return "~" })
	for _, re := range h.userREs() {
		s = re.ReplaceAllStringFunc(s, func(string) string { n++; return "<user>" })
	}
	return s, n
}

type set map[string]bool

func (s set) sorted() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// finds are the paths and usernames found in a payload.
type finds struct{ paths, users set }

func newFinds() *finds { return &finds{paths: set{}, users: set{}} }

// scan notes the absolute paths and usernames of s.
func (f *finds) scan(s string, h *Hider) {
	if s == "" {
		return
	}
	for _, m := range absPath().FindAllStringSubmatch(s, -1) {
		f.paths[strings.TrimRight(m[1], `\/ `)] = true
	}
	for _, m := range homePath().FindAllStringSubmatch(s, -1) {
		f.users[m[1]] = true
	}
	for i, re := range h.userREs() {
		if re.MatchString(s) {
			f.users[h.Users[i]] = true
		}
	}
}
