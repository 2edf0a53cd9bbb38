// Package query writes the SQL both engines share: which conditions a
// session listing, a reference lookup, a search, a usage report or a
// prune puts on sessions s and messages m, and the queries of a usage
// report. Each engine supplies its Dialect: how it writes placeholders,
// passes times, and does what only it can (a case-insensitive title, a
// paging cursor its indexes serve, a full-text match).
package query

import (
	"fmt"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// Dialect is how an engine writes what its SQL differs in.
type Dialect struct {
	// Param returns the placeholder of the nth argument (from 1).
	Param func(n int) string
	// Equal is how a column is compared with a text argument ?, as
	// "col = " and Equal; "?" when empty. SQLite writes CAST(? AS TEXT):
	// a bare ? compared with a column of a table that has a partial
	// index on "x IS NOT NULL" makes SQLite's planner look at the bound
	// value, so that every new binding re-prepares the statement (a
	// sixth of a listing's time).
	Equal string
	// Time returns a time as the engine compares it with stored ones.
	Time func(t time.Time) any
	// Before is the condition of a listing page after cursor c: sessions
	// s older than c.UpdatedAt, or as old with a smaller id; each ? in
	// it stands for the next of args.
	Before func(c *loom.Cursor) (cond string, args []any)
	// TitleIs is the condition that s.title equals ? ignoring case.
	TitleIs string
	// Like is the operator of a LIKE that ignores case ("LIKE" when
	// empty: SQLite's ignores the case of ASCII letters, as its lower()
	// does).
	Like string
	// WordsIn, when set, is the name of the engine's function
	// WordsIn(title, description, words) that counts the words (lower
	// case, apart by WordsSep) that title or description holds as
	// title Like '%word%' finds it, a word twice counted twice: one call
	// a session instead of two Likes a word, which a title search of
	// every session (a search across every project) spends most of its
	// time in.
	WordsIn string
	// Join joins the next table of a query that walks from rows found
	// to the rows they name; SQLite's CROSS JOIN fixes the order of the
	// join, so that each step seeks an index from the rows already found.
	Join string
	// Lateral says the engine joins a lateral subquery (CROSS JOIN
	// LATERAL), which makes the planner look a row up for each row
	// found where a join may read the table whole (PostgreSQL).
	Lateral bool
	// Match says how messages m that match text as a search does are
	// found; ok is false when text has nothing to search for.
	Match func(text string) (m Match, ok bool)
	// Hour is the SQL of the hour of m.created_at in UTC as text
	// ("2006-01-02T15"), and Quarter that of the quarter of its hour
	// (0 to 3), which a usage slice groups messages by.
	Hour, Quarter string
}

// WordsSep parts the words of Dialect.WordsIn's third argument.
const WordsSep = "\x1f"

// equal is Equal, "?" when empty.
func (d Dialect) equal() string {
	if d.Equal == "" {
		return "?"
	}
	return d.Equal
}

func (d Dialect) like() string {
	if d.Like == "" {
		return "LIKE"
	}
	return d.Like
}

// Match is how an engine finds the messages m that match a search.
type Match struct {
	// From is messages m joined with what finds them.
	From string
	// Cond is the condition of a match; each ? in it stands for the
	// next of Args.
	Cond string
	Args []any
	// Newest is the ORDER BY that walks matches newest first.
	Newest string
}

// Clause is a WHERE clause being written: conditions joined by AND.
type Clause struct {
	d     Dialect
	conds []string
	// Args are the arguments of the conditions, in order.
	Args []any
}

// New starts a clause in d's dialect.
func New(d Dialect) *Clause { return &Clause{d: d} }

// Add appends cond, in which each ? stands for the next of args.
func (c *Clause) Add(cond string, args ...any) {
	c.conds = append(c.conds, c.SQL(cond, args...))
}

// SQL returns sql with each ? replaced by the placeholder of the next of
// args, which it appends to c.Args: for SQL that goes with the clause
// elsewhere in a statement, before its conditions.
func (c *Clause) SQL(sql string, args ...any) string {
	var b strings.Builder
	for _, a := range args {
		i := strings.IndexByte(sql, '?')
		if i < 0 {
			panic(fmt.Sprintf("query: %d arguments for %q", len(args), sql))
		}
		c.Args = append(c.Args, a)
		b.WriteString(sql[:i])
		b.WriteString(c.d.Param(len(c.Args)))
		sql = sql[i+1:]
	}
	b.WriteString(sql)
	return b.String()
}

// String is the conditions joined by AND, TRUE when there are none.
func (c *Clause) String() string {
	if len(c.conds) == 0 {
		return "TRUE"
	}
	return strings.Join(c.conds, " AND ")
}

// Trash keeps the sessions s in the trash (deleted) or the live ones.
func (c *Clause) Trash(deleted bool) {
	if deleted {
		c.Add("s.deleted_at IS NOT NULL")
	} else {
		c.Add("s.deleted_at IS NULL")
	}
}

// Sessions returns the WHERE, ORDER BY and LIMIT of a session listing
// with f, newest first, and its arguments.
func Sessions(d Dialect, f loom.SessionFilter) (string, []any) {
	c := New(d)
	for _, col := range FilterColumns(f) {
		c.Add("s."+col.Name+" = "+d.equal(), col.Value)
	}
	c.Trash(f.Deleted)
	switch f.Archived {
	case loom.HideArchived:
		c.Add("s.archived_at IS NULL")
	case loom.OnlyArchived:
		c.Add("s.archived_at IS NOT NULL")
	}
	if !f.UpdatedBefore.IsZero() {
		c.Add("s.updated_at < ?", d.Time(f.UpdatedBefore))
	}
	if f.Before != nil {
		cond, args := d.Before(f.Before)
		c.Add(cond, args...)
	}
	if f.Text != "" {
		c.text(f.Text, f.UserID)
	}
	q := "WHERE " + c.String() + " ORDER BY s.updated_at DESC, s.id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return q, c.Args
}

// text is SessionFilter.Text: title, key, description or last prompt
// containing text, an id starting with it, or matching messages.
func (c *Clause) text(text, userID string) {
	pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(text) + "%"
	var or []string
	var args []any
	for _, col := range []string{"s.title", "s.key", "s.description", "s.last_prompt"} {
		or = append(or, "lower("+col+`) LIKE lower(?) ESCAPE '\'`)
		args = append(args, pattern)
	}
	if len(text) >= 4 {
		prefix := strings.ToLower(text)
		or = append(or, "(s.id >= ? AND s.id < ?)")
		args = append(args, prefix, prefix+"~")
	}
	if m, ok := c.d.Match(text); ok {
		// The newest matches of the user's messages: a word found in
		// most messages must not make a listing read them all.
		q := "SELECT m.session_id FROM " + m.From
		cond := m.Cond
		args = append(args, m.Args...)
		if userID != "" {
			q += " " + c.d.Join + " sessions ms ON ms.id = m.session_id"
			cond += " AND ms.user_id = ?"
			args = append(args, userID)
		}
		or = append(or, fmt.Sprintf("s.id IN (%s WHERE %s ORDER BY %s LIMIT %d)", q, cond, m.Newest, loom.MaxTextMatches))
	}
	c.Add("("+strings.Join(or, " OR ")+")", args...)
}

// Lookup returns the WHERE, ORDER BY and LIMIT of one of
// loom.ResolveRef's lookups of v in scope, and its arguments.
func Lookup(d Dialect, scope loom.ResolveScope, by loom.RefLookup, v string) (string, []any) {
	c := New(d)
	if scope.UserID != "" {
		c.Add("s.user_id = ?", scope.UserID)
	}
	c.Trash(scope.Deleted)
	switch by {
	case loom.RefByID:
		c.Add("s.id = ?", v)
	case loom.RefByPrefix:
		// Ids are lowercase hex and dashes and compare bytewise, so the
		// range [prefix, prefix+"~") holds exactly the ids that start
		// with it.
		c.Add("s.id >= ? AND s.id < ?", v, v+"~")
	case loom.RefByKey:
		c.Add("s.key = ?", v)
	case loom.RefByTitle:
		c.Add(d.TitleIs, v)
	}
	return "WHERE " + c.String() + " ORDER BY s.updated_at DESC, s.id DESC LIMIT 20", c.Args
}

// Prune is the condition on sessions s that a prune at now selects: live
// sessions (not sub-agent ones, which go with their parents) of the
// user and project, not updated since now-opts.OlderThan.
func Prune(d Dialect, opts loom.PruneOptions, now time.Time) *Clause {
	c := New(d)
	c.Trash(false)
	// An archived session stays until it is deleted by name.
	c.Add("s.archived_at IS NULL")
	c.Add("s.kind <> 'subagent'")
	c.Add("s.updated_at <= ?", d.Time(now.Add(-opts.OlderThan)))
	if opts.UserID != "" {
		c.Add("s.user_id = ?", opts.UserID)
	}
	if opts.ProjectID != "" {
		c.Add("s.project_id = ?", opts.ProjectID)
	}
	return c
}

// UsageTotals returns the SQL of the totals of the usage columns of the
// rows named alias (as "m."), in the order of loom.Usage's fields, each
// cast back to the type it sums (PostgreSQL sums bigint into numeric).
func UsageTotals(alias string) string {
	return fmt.Sprintf(`CAST(coalesce(sum(%[1]sinput_tokens), 0) AS BIGINT),
	CAST(coalesce(sum(%[1]soutput_tokens), 0) AS BIGINT), CAST(coalesce(sum(%[1]sreasoning_tokens), 0) AS BIGINT),
	CAST(coalesce(sum(%[1]scache_read_tokens), 0) AS BIGINT), CAST(coalesce(sum(%[1]scache_write_tokens), 0) AS BIGINT),
	CAST(coalesce(sum(%[1]scache_write_1h_tokens), 0) AS BIGINT),
	CAST(coalesce(sum(%[1]scost_usd), 0) AS DOUBLE PRECISION), CAST(coalesce(sum(%[1]sapi_calls), 0) AS BIGINT),
	CAST(coalesce(sum(%[1]scompactions), 0) AS BIGINT)`, alias)
}

// UsageReport makes the usage report of the sessions f selects: totals
// per session and per project from the counters kept on session rows,
// per model from messages as each session reads them (the view
// session_messages: a fork's inherited history counted once, in the
// session it was made in). run runs a query whose rows are usage rows
// of group.
func UsageReport(d Dialect, f loom.UsageFilter, run func(group, q string, args []any) ([]loom.UsageRow, error)) (*loom.UsageReport, error) {
	c := New(d)
	c.Trash(false)
	for _, col := range []Column{{Name: "user_id", Value: f.UserID}, {Name: "project_id", Value: f.ProjectID}, {Name: "id", Value: f.SessionID}} {
		if col.Value != "" {
			c.Add("s."+col.Name+" = ?", col.Value)
		}
	}
	w := " WHERE " + c.String()
	// A group's sessions, its messages, then its usage.
	sums := "count(*), CAST(coalesce(sum(s.message_count), 0) AS BIGINT), " + UsageTotals("s.")
	msums := "count(DISTINCT m.session_id), count(*), " + UsageTotals("m.")
	rep := &loom.UsageReport{}
	var err error
	if rep.BySession, err = run("session", `SELECT s.id, CASE WHEN s.title <> '' THEN s.title ELSE coalesce(s.key, s.id) END, `+sums+
		` FROM sessions s`+w+` GROUP BY s.id ORDER BY sum(s.cost_usd) DESC, sum(s.input_tokens + s.output_tokens) DESC, s.id`, c.Args); err != nil {
		return nil, err
	}
	for _, r := range rep.BySession {
		rep.Total.Add(r.Usage)
	}
	if f.SessionsOnly {
		return rep, nil
	}
	if rep.ByProject, err = run("project", `SELECT s.project_id, CASE WHEN max(s.project_name) <> '' THEN max(s.project_name) ELSE max(s.surface) END, `+sums+
		` FROM sessions s`+w+` GROUP BY s.project_id ORDER BY sum(s.cost_usd) DESC, s.project_id`, c.Args); err != nil {
		return nil, err
	}
	if rep.BySurface, err = run("surface", `SELECT s.surface, s.surface, `+sums+
		` FROM sessions s`+w+` GROUP BY s.surface ORDER BY sum(s.cost_usd) DESC, s.surface`, c.Args); err != nil {
		return nil, err
	}
	if rep.ByModel, err = run("model", `SELECT m.provider || ':' || m.model, m.model, `+msums+
		` FROM session_messages m JOIN sessions s ON s.id = m.session_id`+w+` AND m.model <> '' AND NOT (s.kind = 'fork' AND m.turn <= s.fork_turn)`+
		` GROUP BY m.provider, m.model ORDER BY sum(m.cost_usd) DESC, m.provider, m.model`, c.Args); err != nil {
		return nil, err
	}
	return rep, nil
}

// UsageSlices returns the query of the usage slices of the messages f
// selects, oldest first; rowscan.UsageSlice reads its rows.
func UsageSlices(d Dialect, f loom.UsageSliceFilter) (string, []any) {
	c := New(d)
	c.Trash(false)
	for _, col := range []Column{{Name: "s.user_id", Value: f.UserID}, {Name: "s.project_id", Value: f.ProjectID}, {Name: "s.surface", Value: f.Surface},
		{Name: "s.id", Value: f.SessionID}} {
		if col.Value != "" {
			c.Add(col.Name+" = ?", col.Value)
		}
	}
	if !f.Since.IsZero() {
		c.Add("m.created_at >= ?", d.Time(f.Since))
	}
	if !f.Until.IsZero() {
		c.Add("m.created_at < ?", d.Time(f.Until))
	}
	// A fork's inherited history is counted in the session it was
	// made in, and a message without usage not at all.
	c.Add("NOT (s.kind = 'fork' AND m.turn <= s.fork_turn)")
	c.Add("(m.input_tokens <> 0 OR m.output_tokens <> 0 OR m.cache_read_tokens <> 0 OR m.cache_write_tokens <> 0 OR m.cost_usd <> 0)")
	long := "FALSE"
	if f.LongContext > 0 {
		long = fmt.Sprintf("(m.input_tokens + m.cache_read_tokens + m.cache_write_tokens > %d)", f.LongContext)
	}
	session, group := "''", ""
	if f.BySession {
		session, group = "s.id", ", s.id"
	}
	q := `SELECT ` + d.Hour + `, ` + d.Quarter + `, min(m.created_at), max(m.created_at), s.surface, s.project_id, max(s.project_name),
	m.provider, m.model, ` + long + `, count(*), ` + UsageTotals("m.") + `, ` + session + `
	FROM session_messages m JOIN sessions s ON s.id = m.session_id WHERE ` + c.String() + `
	GROUP BY 1, 2, s.surface, s.project_id, m.provider, m.model, 10` + group + ` ORDER BY 1, 2, s.surface, s.project_id, m.provider, m.model, 10` + group
	return q, c.Args
}

// Search adds the filters of q on messages m of live sessions s to c.
func (c *Clause) Search(q loom.SearchQuery) {
	c.SearchSessions(q)
	c.SearchMessages(q)
	if q.Role == "" {
		// An agent's instructions (its system prompt, the instruction
		// files and environment it was given) are kept as system
		// messages, which are not the conversation: they are searched
		// only when asked for by their role.
		c.Add("m.role <> ?", loom.RoleSystem)
	}
}

// SearchSessions is the part of Search that keeps sessions s: those of
// its user, project and surface, not in the trash, and not archived
// unless it says so.
func (c *Clause) SearchSessions(q loom.SearchQuery) {
	c.Trash(false)
	// Archived sessions are out of a default search, but a search in
	// one session is in that session whatever its state.
	if !q.Archived && q.SessionID == "" {
		c.Add("s.archived_at IS NULL")
	}
	for _, col := range []Column{{Name: "s.user_id", Value: q.UserID}, {Name: "s.project_id", Value: q.ProjectID}, {Name: "s.surface", Value: q.Surface}} {
		if col.Value != "" {
			c.Add(col.Name+" = ?", col.Value)
		}
	}
}

// SearchMessages is the part of Search that keeps messages m: of its
// session and role, and from its time span.
func (c *Clause) SearchMessages(q loom.SearchQuery) {
	for _, col := range []Column{{Name: "m.session_id", Value: q.SessionID}, {Name: "m.role", Value: q.Role}} {
		if col.Value != "" {
			c.Add(col.Name+" = ?", col.Value)
		}
	}
	if !q.Since.IsZero() {
		c.Add("m.created_at >= ?", c.d.Time(q.Since))
	}
	if !q.Until.IsZero() {
		c.Add("m.created_at < ?", c.d.Time(q.Until))
	}
}

// Set returns the SET list of an update of cols, and its arguments
// (numbered from 1).
func Set(d Dialect, cols []Column) (string, []any) {
	sets := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, col := range cols {
		sets[i] = col.Name + " = " + d.Param(i+1)
		args[i] = col.Value
	}
	return strings.Join(sets, ", "), args
}

// FamilyDialect is how an engine writes the recursive query of
// Store.Family.
type FamilyDialect struct {
	// Start begins the query of the first generation: sessions s whose
	// ids are in its one argument ?, up to where the condition that
	// they are live follows.
	Start string
	// IDs makes Start's argument from the ids.
	IDs func(ids []string) any
	// User is the user column of alias; SQLite's unary + keeps its
	// planner from looking sessions up by user, when ids and parent
	// ids find them.
	User func(alias string) string
	// Int is the placeholder of an integer argument.
	Int string
}

// Family returns the query of Store.Family and its arguments: start at
// the sessions q.IDs names, climb to their roots when asked, then walk
// down. The depth bound keeps a cycle of parent links from looping.
// Every value is an argument, so the query text (and its prepared
// statement) is one of a few.
func Family(d Dialect, fd FamilyDialect, q loom.FamilyQuery) (string, []any) {
	c := New(d)
	var b strings.Builder
	add := func(sql string, args ...any) { b.WriteString(c.SQL(sql, args...)) }
	// live keeps rows of the query's user that are not in the trash.
	live := func(alias string) {
		add(alias + ".deleted_at IS NULL")
		if q.UserID != "" {
			add(" AND "+fd.User(alias)+" = ?", q.UserID)
		}
	}
	subagents := func(alias string) {
		if q.SubagentsOnly {
			add(alias + ".kind = 'subagent' AND ")
		}
	}
	add("WITH RECURSIVE start(id) AS ("+fd.Start+" ", fd.IDs(q.IDs))
	live("s")
	add(")")
	seeds := "start"
	if q.FromRoot {
		add(`, up(start, id, hops) AS (SELECT id, id, 0 FROM start UNION SELECT up.start, p.id, up.hops + 1 FROM up
			`+d.Join+` sessions c ON c.id = up.id `+d.Join+` sessions p ON p.id = c.parent_id WHERE up.hops < `+fd.Int+` AND `, q.Depth())
		subagents("c")
		live("p")
		// Each session's root is the ancestor farthest up (on a cycle,
		// wherever the depth bound stopped the climb).
		add(`), roots(id) AS (SELECT DISTINCT u.id FROM up u WHERE u.hops = (SELECT max(v.hops) FROM up v WHERE v.start = u.start))`)
		seeds = "roots"
	}
	add(`, fam(id, depth) AS (SELECT id, 0 FROM `+seeds+` UNION ALL SELECT s.id, fam.depth + 1 FROM fam
		`+d.Join+` sessions s ON s.parent_id = fam.id WHERE fam.depth < `+fd.Int+` AND `, q.Depth())
	subagents("s")
	live("s")
	if q.Limit <= 0 {
		// Order is made in Go; the database only finds the rows.
		add(`) SELECT ` + rowscan.SessionColumns + rowscan.SessionFrom + `WHERE s.id IN (SELECT id FROM fam)`)
		return b.String(), c.Args
	}
	// A bound keeps the nearest generations: the database orders.
	add(`) SELECT `+rowscan.SessionColumns+` FROM (SELECT id, min(depth) AS depth FROM fam GROUP BY id) f
		`+d.Join+` sessions s ON s.id = f.id LEFT JOIN locks l ON l.session_id = s.id
		ORDER BY f.depth, s.created_at, s.id LIMIT `+fd.Int, q.Limit)
	return b.String(), c.Args
}
