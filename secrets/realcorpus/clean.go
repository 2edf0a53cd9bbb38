package realcorpus

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/loomhq/loom"
)

// CleanMsg is one message cut from a real file.
type CleanMsg struct {
	Source string // gohome, modcache, debian, lockfiles, npm-assets, sessions
	Path   string // the file, relative to its source's root
	Msg    *loom.Message
}

// Excluded is a piece of real material left out of the clean set, and
// why.
type Excluded struct {
	Source, Path, Reason string
}

// Exclusion is a path pattern whose files hold secret-shaped fixtures:
// real trees keep test keys and fake tokens on purpose. A message from
// a file whose path (source:path) matches is left out of the clean set,
// with the reason.
type Exclusion struct {
	Pattern *regexp.Regexp
	Reason  string
}

// Cutter turns real files into messages the way agents see them: small
// files whole as `cat` output, large ones in chunks of 1–4 KB (at most
// MaxChunks of them, spread over the file), some pasted in a prompt,
// some quoted in a reply, some attached as a file, tool output stored
// as loom stores it.
type Cutter struct {
	MaxChunks  int
	Exclusions []Exclusion
	Out        []CleanMsg
	Skipped    []Excluded
	prefix     string // of the paths Walk gives, when it walks a subtree
}

var pemPrivate = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----`)
var pemEnd = regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----`)

// privateSpans are the byte ranges of PEM private key blocks in text,
// from BEGIN to END (or to the end of the text, for a cut one).
func privateSpans(text string) [][2]int {
	var out [][2]int
	for _, loc := range pemPrivate.FindAllStringIndex(text, -1) {
		end := len(text)
		if e := pemEnd.FindStringIndex(text[loc[1]:]); e != nil {
			end = loc[1] + e[1]
		}
		out = append(out, [2]int{loc[0], end})
	}
	return out
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// Text reports whether b reads as text: no NUL, valid UTF-8 (allowing
// a cut rune at the end).
func Text(b []byte) bool {
	head := b[:min(len(b), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	return utf8.Valid(b[:max(0, len(b)-4)]) || utf8.Valid(b)
}

// chunks cuts text at line ends into pieces of 1–4 KB, their sizes
// drawn from the path so that a run cuts the same way each time.
func chunks(path, text string) []string {
	if len(text) <= 4096 {
		return []string{text}
	}
	var out []string
	h := hash(path)
	for len(text) > 0 {
		want := 1024 + int(h%3072)
		h = h*1664525 + 1013904223
		if len(text) <= want+512 {
			out = append(out, text)
			break
		}
		cut := strings.IndexByte(text[want:], '\n')
		if cut < 0 || cut > 1024 {
			cut = 0
		}
		n := want + cut + 1
		if n > len(text) {
			n = len(text)
		}
		// never cut inside a rune
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// Add cuts the file at path (shown as rel, from source) into messages.
func (c *Cutter) Add(source, rel string, data []byte) {
	rel = c.prefix + rel
	key := source + ":" + rel
	for _, e := range c.Exclusions {
		if e.Pattern.MatchString(key) {
			c.Skipped = append(c.Skipped, Excluded{source, rel, e.Reason})
			return
		}
	}
	text := string(data)
	spans := privateSpans(text)
	pieces := chunks(rel, text)
	offs := make([]int, len(pieces))
	for i, o := 1, 0; i < len(pieces); i++ {
		o += len(pieces[i-1])
		offs[i] = o
	}
	// at most MaxChunks pieces, spread evenly over the file
	idx := make([]int, 0, len(pieces))
	if c.MaxChunks > 0 && len(pieces) > c.MaxChunks {
		for k := 0; k < c.MaxChunks; k++ {
			idx = append(idx, k*len(pieces)/c.MaxChunks)
		}
	} else {
		for k := range pieces {
			idx = append(idx, k)
		}
	}
	for _, k := range idx {
		p, start := pieces[k], offs[k]
		end := start + len(p)
		private := false
		for _, s := range spans {
			if s[0] < end && s[1] > start {
				private = true
			}
		}
		name := rel
		if len(pieces) > 1 {
			name = fmt.Sprintf("%s#%d", rel, k+1)
		}
		if private {
			c.Skipped = append(c.Skipped, Excluded{source, name, "holds a PEM private key block (a test key, but a key)"})
			continue
		}
		c.Out = append(c.Out, CleanMsg{Source: source, Path: name, Msg: c.message(rel, p, k, len(pieces), start, text)})
	}
}

func (c *Cutter) message(rel, p string, k, n, start int, whole string) *loom.Message {
	base := filepath.Base(rel)
	h := hash(rel) + uint32(k)*2654435761
	line := strings.Count(whole[:start], "\n") + 1
	switch h % 20 {
	case 0, 1:
		return Msg(loom.RoleUser, TextPart(pickS(h, "Can you explain what this does?", "This is from "+base+", is it right?", "why does this break the build", "Look at this:")+"\n\n```\n"+p+"\n```\n"))
	case 2, 3:
		return Msg(loom.RoleAssistant, TextPart(pickS(h, "Here is the relevant part of `"+base+"`:", "The file `"+rel+"` reads:", "From "+base+":")+"\n\n```\n"+p+"\n```\n\n"+pickS(h/7, "This is where the value is set.", "Nothing here needs to change.", "")))
	case 4:
		return Msg(loom.RoleUser, TextPart("@"+base), FilePart(rel, "text/plain", p))
	case 5, 6, 7:
		var b strings.Builder
		for i, l := range strings.SplitAfter(p, "\n") {
			if l == "" {
				continue
			}
			fmt.Fprintf(&b, "%6d\t%s", line+i, l)
		}
		return tool("cat -n "+rel+pickS(h, "", " | head -200"), b.String())
	}
	if n == 1 {
		return tool(pickS(h, "cat ", "cat ", "less -FX ")+rel, p)
	}
	return tool(fmt.Sprintf("sed -n '%d,%dp' %s", line, line+strings.Count(p, "\n"), rel), p)
}

func pickS(h uint32, xs ...string) string { return xs[int(h%uint32(len(xs)))] }

// Walk adds the text files under root (shown relative to it) to c,
// taking one file in every stride, in path order, those of at most
// maxSize bytes, and those keep accepts.
func (c *Cutter) Walk(source, root string, stride, maxSize int, keep func(rel string, info fs.FileInfo) bool) (files int, err error) {
	var paths []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "node_modules" && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return 0, err
	}
	sort.Strings(paths)
	for i, p := range paths {
		if stride > 1 && i%stride != 0 {
			continue
		}
		info, err := os.Stat(p)
		if err != nil || info.Size() == 0 || info.Size() > int64(maxSize) || info.Mode().Perm()&0o004 == 0 {
			// files others may not read are a machine's own secrets
			continue
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if keep != nil && !keep(rel, info) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil || !Text(b) {
			continue
		}
		files++
		c.Add(source, rel, b)
	}
	return files, nil
}

// GoModModules returns the module directories (path@version) that a
// go.mod requires, as the module cache names them: the modules whose
// packages the module's own packages and tests import, which building
// and testing them downloads.
func GoModModules(gomod []byte) []string {
	var out []string
	block := false
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "require (":
			block = true
			continue
		case block && line == ")":
			block = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !block:
			continue
		}
		f := strings.Fields(line)
		if len(f) == 2 {
			out = append(out, escapePath(f[0])+"@"+f[1])
		}
	}
	sort.Strings(out)
	return out
}

// escapePath writes a module path as the module cache does: an upper
// case letter as ! and its lower case.
func escapePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			b.WriteRune(r + 'a' - 'A')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
