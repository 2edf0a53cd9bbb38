package fileedit

import (
	"strings"

	"github.com/loomhq/loom"
)

// maxPatchLines bounds what one patch is read for: a patch is a tool
// call's input, which a store holds whole, and reading it is linear.
const maxPatchLines = 200_000

// ParsePatch reads the changes of a patch: Codex's apply_patch format
// ("*** Begin Patch", "*** Add File:", "*** Update File:" with "***
// Move to:", "*** Delete File:"), which opencode's patch tool takes too,
// or a unified diff ("--- a/x", "+++ b/x", "@@"). Each hunk is a
// replacement of its context and removed lines by its context and
// added lines; an added file is a write. What it cannot read it leaves
// out.
func ParsePatch(s string) []Change {
	lines := Lines(s)
	if len(lines) > maxPatchLines {
		lines = lines[:maxPatchLines]
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "*** Begin Patch") {
			return parseCodexPatch(lines)
		}
	}
	return parseUnified(lines)
}

// hunk gathers one hunk's old and new lines.
type hunk struct{ old, new []string }

func (h *hunk) replacement() (Replacement, bool) {
	if len(h.old) == 0 && len(h.new) == 0 {
		return Replacement{}, false
	}
	return Replacement{Old: strings.Join(h.old, "\n"), New: strings.Join(h.new, "\n")}, true
}

func parseCodexPatch(lines []string) []Change {
	var out []Change
	var cur *Change
	var h hunk
	var add []string
	adding := false
	flush := func() {
		if cur == nil {
			return
		}
		if adding {
			cur.Content = strings.Join(add, "\n")
			if len(add) > 0 {
				cur.Content += "\n"
			}
		} else if r, ok := h.replacement(); ok {
			cur.Replace = append(cur.Replace, r)
		}
		out = append(out, *cur)
		cur, h, add, adding = nil, hunk{}, nil, false
	}
	endHunk := func() {
		if cur != nil && !adding {
			if r, ok := h.replacement(); ok {
				cur.Replace = append(cur.Replace, r)
			}
		}
		h = hunk{}
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "*** Begin Patch"), strings.HasPrefix(l, "*** End of File"):
		case strings.HasPrefix(l, "*** End Patch"):
			flush()
		case strings.HasPrefix(l, "*** Add File:"):
			flush()
			cur, adding = &Change{Op: loom.EditWrite, Path: strings.TrimSpace(l[len("*** Add File:"):])}, true
		case strings.HasPrefix(l, "*** Update File:"):
			flush()
			cur = &Change{Op: loom.EditChange, Path: strings.TrimSpace(l[len("*** Update File:"):])}
		case strings.HasPrefix(l, "*** Delete File:"):
			flush()
			out = append(out, Change{Op: loom.EditDelete, Path: strings.TrimSpace(l[len("*** Delete File:"):])})
		case strings.HasPrefix(l, "*** Move to:"):
			if cur != nil && !adding {
				// The edits land in the file under its new name.
				out = append(out, Change{Op: loom.EditMove, Path: strings.TrimSpace(l[len("*** Move to:"):]), From: cur.Path})
				cur.Path = strings.TrimSpace(l[len("*** Move to:"):])
			}
		case strings.HasPrefix(l, "@@"):
			endHunk()
		case cur == nil:
		case adding:
			if strings.HasPrefix(l, "+") {
				add = append(add, l[1:])
			}
		case strings.HasPrefix(l, "+"):
			h.new = append(h.new, l[1:])
		case strings.HasPrefix(l, "-"):
			h.old = append(h.old, l[1:])
		case strings.HasPrefix(l, " "):
			h.old, h.new = append(h.old, l[1:]), append(h.new, l[1:])
		case l == "":
			h.old, h.new = append(h.old, ""), append(h.new, "")
		}
	}
	flush()
	return out
}

// parseUnified reads a unified diff, git's included (renames, new and
// deleted files).
func parseUnified(lines []string) []Change {
	var out []Change
	var cur *Change
	var h hunk
	var oldPath, renameFrom string
	inHunk, created := false, false
	endHunk := func() {
		if cur != nil {
			if created {
				cur.Content = strings.Join(h.new, "\n") + "\n"
			} else if r, ok := h.replacement(); ok {
				cur.Replace = append(cur.Replace, r)
			}
		}
		h, inHunk = hunk{}, false
	}
	flush := func() {
		endHunk()
		if cur != nil && (cur.Content != "" || len(cur.Replace) > 0) {
			out = append(out, *cur)
		}
		cur, created = nil, false
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			flush()
			oldPath, renameFrom = "", ""
		case strings.HasPrefix(l, "rename from "):
			renameFrom = strings.TrimSpace(l[len("rename from "):])
		case strings.HasPrefix(l, "rename to ") && renameFrom != "":
			out = append(out, Change{Op: loom.EditMove, Path: strings.TrimSpace(l[len("rename to "):]), From: renameFrom})
		case strings.HasPrefix(l, "--- ") && !inHunk:
			flush()
			oldPath = diffPath(l[4:])
		case strings.HasPrefix(l, "+++ ") && !inHunk:
			p := diffPath(l[4:])
			if p == "/dev/null" {
				if oldPath != "" && oldPath != "/dev/null" {
					out = append(out, Change{Op: loom.EditDelete, Path: oldPath})
				}
				continue
			}
			cur = &Change{Op: loom.EditChange, Path: p}
			if oldPath == "/dev/null" {
				cur.Op, created = loom.EditWrite, true
			}
		case strings.HasPrefix(l, "@@"):
			if cur != nil && !created {
				endHunk()
			}
			inHunk = cur != nil
		case !inHunk:
		case strings.HasPrefix(l, "+"):
			h.new = append(h.new, l[1:])
		case strings.HasPrefix(l, "-"):
			h.old = append(h.old, l[1:])
		case strings.HasPrefix(l, " "), l == "":
			c := strings.TrimPrefix(l, " ")
			h.old, h.new = append(h.old, c), append(h.new, c)
		case strings.HasPrefix(l, `\`):
		default:
			flush()
		}
	}
	flush()
	return out
}

// diffPath is the path a unified diff's ---/+++ line names: without
// the time stamp after a tab, nor git's a/ and b/.
func diffPath(p string) string {
	p = strings.TrimSpace(p)
	if i := strings.IndexByte(p, '\t'); i >= 0 {
		p = p[:i]
	}
	if strings.HasPrefix(p, "a/") || strings.HasPrefix(p, "b/") {
		p = p[2:]
	}
	return p
}

// fromSearchReplace reads blocks of a search and its replacement
// (Cline's replace_in_file: "------- SEARCH", "=======", "+++++++
// REPLACE", or the same with <<<<<<< and >>>>>>>).
func fromSearchReplace(path, s string) []Change {
	var rs []Replacement
	var old, nw []string
	state := 0 // 0 outside, 1 search, 2 replace
	for _, l := range Lines(s) {
		t := strings.TrimSpace(l)
		switch {
		case state == 0 && (strings.HasSuffix(t, "SEARCH") && (strings.HasPrefix(t, "---") || strings.HasPrefix(t, "<<<"))):
			state, old, nw = 1, nil, nil
		case state == 1 && strings.HasPrefix(t, "=======") && strings.Trim(t, "=") == "":
			state = 2
		case state == 2 && strings.HasSuffix(t, "REPLACE") && (strings.HasPrefix(t, "+++") || strings.HasPrefix(t, ">>>")):
			rs = append(rs, Replacement{Old: strings.Join(old, "\n"), New: strings.Join(nw, "\n")})
			state = 0
		case state == 1:
			old = append(old, l)
		case state == 2:
			nw = append(nw, l)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	return []Change{{Op: loom.EditChange, Path: path, Replace: rs}}
}
