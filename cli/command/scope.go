package command

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
)

// Scope is whose sessions a command works on and which project's it
// prefers: it finds the session a reference names, and shows ids as a
// terminal can type them back. User and Project are asked each time, so
// that a Scope taken when a command is built follows its flags
// (Invocation.Scope).
type Scope struct {
	IO      *term.IOStreams
	User    func() string
	Project func() (loom.Project, error)
	// Team reports whether --team made the store a team's (nil: never).
	Team func() bool
}

// ScopeProject is the project that a command which searches or lists
// sessions keeps to: the working directory's, the same default as loom
// mcp's. Nil means every project: when all is set (-a), in a team's
// store (--team: it holds only the projects the team shares, which a
// member's clone may keep at another path, or not at all), or where no
// project can be found (a working directory that is gone).
func (sc Scope) ScopeProject(all bool) *loom.Project {
	if all || sc.Team != nil && sc.Team() {
		return nil
	}
	p, err := sc.Project()
	if err != nil {
		return nil
	}
	return &p
}

// Resolve finds the live session ref names for this user, preferring this
// project's keys.
func (sc Scope) Resolve(ctx context.Context, st loom.Reader, ref string) (*loom.Session, error) {
	return sc.ResolveIn(ctx, st, ref, false)
}

// ResolveIn is Resolve among the trashed sessions when deleted is set.
func (sc Scope) ResolveIn(ctx context.Context, st loom.Reader, ref string, deleted bool) (*loom.Session, error) {
	scope := loom.ResolveScope{UserID: sc.User(), Deleted: deleted}
	// A directory outside any readable project still resolves ids and
	// titles; it only loses the preference for this project's keys.
	if p, err := sc.Project(); err == nil {
		scope.ProjectID = p.ID
	}
	s, err := st.Resolve(ctx, ref, scope)
	if deleted || loom.ErrorCode(err) != loom.ENOTFOUND {
		return s, err
	}
	// Not among the live sessions: if it is in the trash, say so and how
	// to get it back, rather than that it does not exist.
	scope.Deleted = true
	if t, terr := st.Resolve(ctx, ref, scope); terr == nil && t.DeletedAt != nil {
		return nil, loom.Errorf(loom.ENOTFOUND, "session %s is in the trash since %s; loom session restore %s brings it back",
			SessionLabel(t), loom.FormatTime(*t.DeletedAt), t.ID)
	}
	return nil, suggest(ctx, st, sc.User(), ref, err)
}

// suggest adds to err, that no session matches ref, the sessions whose
// title (or key, description, last prompt, newest messages) holds ref, as
// the picker finds them: a word of a title is not a reference, but the
// session is likely one of those.
func suggest(ctx context.Context, st loom.Reader, user, ref string, err error) error {
	if len(ref) < 3 || strings.ContainsAny(ref, "\n\r") {
		return err
	}
	found, ferr := st.Sessions(ctx, loom.SessionFilter{UserID: user, Text: ref, Archived: loom.WithArchived, Limit: 20})
	if ferr != nil || len(found) == 0 {
		return err
	}
	// Titles that hold it first, as a word of a title is what was meant.
	lower := strings.ToLower(ref)
	slices.SortStableFunc(found, func(a, b *loom.Session) int {
		ia, ib := strings.Contains(strings.ToLower(a.Title), lower), strings.Contains(strings.ToLower(b.Title), lower)
		switch {
		case ia == ib:
			return 0
		case ia:
			return -1
		}
		return 1
	})
	var names []string
	for _, s := range found[:min(3, len(found))] {
		names = append(names, fmt.Sprintf("%s (%s)", SessionLabel(s), s.ID))
	}
	more := ""
	if len(found) > 3 {
		more = ", …"
	}
	return loom.Errorf(loom.ENOTFOUND, "no session matches %q; sessions that mention it: %s%s (give an id, or the whole title)",
		ref, strings.Join(names, ", "), more)
}

// RefLen is how much of ids a terminal shows: the shortest prefix, at
// least loom.ShortIDLen, that tells them apart among themselves and that
// resolves back to each among all of the user's sessions (loom.RefLen),
// so that an id loom prints can be typed back. Piped output shows whole
// ids and asks the store nothing.
func (sc Scope) RefLen(ctx context.Context, st loom.Store, ids []string) int {
	n := term.AbbrevLen(ids)
	if !sc.IO.IsStdoutTTY() || len(ids) == 0 {
		return n
	}
	m, err := loom.RefLen(ctx, st, loom.ResolveScope{UserID: sc.User()}, ids)
	if err != nil {
		slog.Debug("shortest unique id prefix", "err", err)
		return n
	}
	return max(n, m)
}

// DisplayID is id as a terminal shows it (see RefLen), whole otherwise.
func (sc Scope) DisplayID(ctx context.Context, st loom.Store, id string) string {
	return term.AbbrevID(sc.IO, id, sc.RefLen(ctx, st, []string{id}))
}
