package blame

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Authorship is one commit's authorship log.
type Authorship struct {
	Files []AttestedFile
	Meta  AuthorshipMeta
}

// AttestedFile is a file of an authorship log and its attestations.
type AttestedFile struct {
	Path    string
	Entries []Attestation
}

// Attestation is the lines (at the commit) one key accounts for: a
// session's trace (s_…::t_…), a known human (h_…) or a legacy prompt.
type Attestation struct {
	Key   string
	Lines []int
}

// AuthorshipMeta is an authorship log's metadata section.
type AuthorshipMeta struct {
	SchemaVersion string                   `json:"schema_version"`
	GitAIVersion  string                   `json:"git_ai_version,omitempty"`
	BaseCommitSHA string                   `json:"base_commit_sha"`
	Prompts       map[string]PromptRecord  `json:"prompts"`
	Sessions      map[string]SessionRecord `json:"sessions,omitempty"`
	Humans        map[string]HumanRecord   `json:"humans,omitempty"`
}

// AgentID names an AI session: its tool, its id there, its model.
type AgentID struct {
	Tool  string `json:"tool"`
	ID    string `json:"id"`
	Model string `json:"model"`
}

// SessionRecord is a session of an authorship log.
type SessionRecord struct {
	AgentID          AgentID           `json:"agent_id"`
	HumanAuthor      string            `json:"human_author,omitempty"`
	CustomAttributes map[string]string `json:"custom_attributes,omitempty"`
}

// PromptRecord is a session of a log of the legacy format.
type PromptRecord struct {
	AgentID        AgentID           `json:"agent_id"`
	HumanAuthor    string            `json:"human_author,omitempty"`
	MessagesURL    string            `json:"messages_url,omitempty"`
	TotalAdditions int               `json:"total_additions"`
	TotalDeletions int               `json:"total_deletions"`
	AcceptedLines  int               `json:"accepted_lines"`
	OverridenLines int               `json:"overriden_lines"`
	Custom         map[string]string `json:"custom_attributes,omitempty"`
}

// HumanRecord is a known human of an authorship log.
type HumanRecord struct {
	Author string `json:"author"`
}

// maxNote bounds the note read for one commit.
const maxNote = 16 << 20

// ParseAuthorship reads an authorship log.
func ParseAuthorship(text string) (*Authorship, error) {
	if len(text) > maxNote {
		return nil, fmt.Errorf("authorship log: %d bytes, more than %d", len(text), maxNote)
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	head, meta, ok := strings.Cut(text, "\n---\n")
	if !ok {
		if rest, found := strings.CutPrefix(text, "---\n"); found {
			head, meta, ok = "", rest, true
		}
	}
	if !ok {
		return nil, fmt.Errorf("authorship log: no --- line between its attestations and its metadata")
	}
	a := &Authorship{}
	if err := json.Unmarshal([]byte(meta), &a.Meta); err != nil {
		return nil, fmt.Errorf("authorship log: metadata: %w", err)
	}
	if !strings.HasPrefix(a.Meta.SchemaVersion, "authorship/") {
		return nil, fmt.Errorf("authorship log: schema_version %q is not authorship/…", a.Meta.SchemaVersion)
	}
	for n, l := range strings.Split(head, "\n") {
		switch {
		case strings.TrimSpace(l) == "":
		case !strings.HasPrefix(l, " "):
			path := l
			if uq, err := strconv.Unquote(l); err == nil && strings.HasPrefix(l, `"`) {
				path = uq
			}
			if path == "" {
				return nil, fmt.Errorf("authorship log: line %d: a file with no path", n+1)
			}
			a.Files = append(a.Files, AttestedFile{Path: path})
		case len(a.Files) == 0:
			return nil, fmt.Errorf("authorship log: line %d: an attestation before any file", n+1)
		default:
			key, spec, ok := strings.Cut(strings.TrimSpace(l), " ")
			lines, err := parseLineSpec(spec)
			if !ok || key == "" || err != nil {
				return nil, fmt.Errorf("authorship log: line %d: %q is no attestation", n+1, strings.TrimSpace(l))
			}
			f := &a.Files[len(a.Files)-1]
			f.Entries = append(f.Entries, Attestation{Key: key, Lines: lines})
		}
	}
	return a, nil
}

// maxAttested bounds the lines one attestation may name.
const maxAttested = 1 << 20

// parseLineSpec reads 1,2,19-222,300.
func parseLineSpec(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		from, err := strconv.Atoi(a)
		if err != nil || from < 1 {
			return nil, fmt.Errorf("bad line %q", part)
		}
		to := from
		if isRange {
			if to, err = strconv.Atoi(b); err != nil || to < from {
				return nil, fmt.Errorf("bad range %q", part)
			}
		}
		if len(out)+to-from+1 > maxAttested {
			return nil, fmt.Errorf("more than %d lines", maxAttested)
		}
		for n := from; n <= to; n++ {
			out = append(out, n)
		}
	}
	return out, nil
}

// lineSpec writes lines (ascending) as ranges: 1-4,9,12-13.
func lineSpec(lines []int) string {
	var b strings.Builder
	for i := 0; i < len(lines); {
		j := i
		for j+1 < len(lines) && lines[j+1] == lines[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(lines[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(lines[j]))
		}
		i = j + 1
	}
	return b.String()
}

// String writes the log in the standard's form.
func (a *Authorship) String() string {
	var b strings.Builder
	for _, f := range a.Files {
		if strings.ContainsAny(f.Path, " \t\n\r\"") || f.Path == "---" || !utf8.ValidString(f.Path) {
			b.WriteString(strconv.Quote(f.Path))
		} else {
			b.WriteString(f.Path)
		}
		b.WriteByte('\n')
		for _, e := range f.Entries {
			b.WriteString("  " + e.Key + " " + lineSpec(e.Lines) + "\n")
		}
	}
	b.WriteString("---\n")
	meta, _ := json.MarshalIndent(a.Meta, "", "  ")
	b.Write(meta)
	b.WriteByte('\n')
	return b.String()
}
