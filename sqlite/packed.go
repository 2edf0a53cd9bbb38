package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// packed is a row whose columns an engine packed into one JSON array
// (SQLite's json_array): reading one text column costs a driver far less
// than reading dozens. Its Scan reads the array's values into dest as
// the columns' own would be, by position, except at the positions At:
// those are the values Beside, columns read beside the array, for what
// the array would change (SQLite writes reals in JSON to 15 digits, and
// a JSON column into it as a string to escape).
type packed struct {
	JSON   string
	At     []int
	Beside []any
}

// packColumns returns the SQL of the columns cols (a list as
// SessionColumns) packed for Packed: a json_array of all but beside,
// then beside in their order; and the positions of beside in cols.
func packColumns(cols string, beside ...string) (sql string, at []int) {
	var in []string
	for i, c := range strings.Split(cols, ",") {
		c = strings.TrimSpace(c)
		if j := slices.Index(beside, c); j >= 0 {
			if j != len(at) {
				panic("rowscan: columns beside the array out of order: " + c)
			}
			at = append(at, i)
			continue
		}
		in = append(in, c)
	}
	if len(at) != len(beside) {
		panic(fmt.Sprintf("rowscan: %v not all among the columns", beside))
	}
	sql = "json_array(" + strings.Join(in, ", ") + ")"
	if len(beside) > 0 {
		sql += ", " + strings.Join(beside, ", ")
	}
	return sql, at
}

// Scan implements Scanner.
func (p *packed) Scan(dest ...any) error {
	s := strings.TrimSpace(p.JSON)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return fmt.Errorf("packed row is not a JSON array")
	}
	s = s[1 : len(s)-1]
	first, k := true, 0
	for i, d := range dest {
		var v any
		var err error
		if k < len(p.At) && p.At[k] == i {
			v = p.Beside[k]
			k++
		} else {
			if !first {
				if s == "" || s[0] != ',' {
					return fmt.Errorf("packed row has too few values for %d columns", len(dest))
				}
				s = s[1:]
			}
			first = false
			var tok string
			var kind byte
			if tok, kind, s, err = packedToken(s); err != nil {
				return fmt.Errorf("packed row, value %d: %w", i, err)
			}
			if direct(d, tok, kind) {
				continue
			}
			if v, err = tokenValue(tok, kind); err != nil {
				return fmt.Errorf("packed row, value %d: %w", i, err)
			}
		}
		if sc, ok := d.(sql.Scanner); ok {
			err = sc.Scan(v)
		} else {
			err = assign(d, v)
		}
		if err != nil {
			return fmt.Errorf("packed row, value %d: %w", i, err)
		}
	}
	if s != "" {
		return fmt.Errorf("packed row has more than %d values", len(dest))
	}
	return nil
}

// The kinds of packedToken's tokens.
const (
	tokString = 's'
	tokNull   = 'n'
	tokNumber = '0'
)

// packedToken reads the JSON scalar at the start of s: a string (tok
// is its value), null, or a number (tok is its text); rest is what
// follows it.
func packedToken(s string) (tok string, kind byte, rest string, err error) {
	if s == "" {
		return "", 0, "", fmt.Errorf("missing value")
	}
	switch s[0] {
	case '"':
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				return unescape(s, i)
			case '"':
				return s[1:i], tokString, s[i+1:], nil
			}
		}
		return "", 0, "", fmt.Errorf("unterminated string")
	case 'n':
		if !strings.HasPrefix(s, "null") {
			return "", 0, "", fmt.Errorf("bad value %.10q", s)
		}
		return "", tokNull, s[4:], nil
	}
	end := strings.IndexByte(s, ',')
	if end < 0 {
		end = len(s)
	}
	return s[:end], tokNumber, s[end:], nil
}

// unescape reads the JSON string at the start of s, which has its first
// escape at i, as packedToken does. It keeps the bytes between escapes
// as they are (as the unescaped strings are kept), even when they are
// not UTF-8, which a JSON decoder would replace.
func unescape(s string, i int) (tok string, kind byte, rest string, err error) {
	b := make([]byte, 0, len(s))
	b = append(b, s[1:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return string(b), tokString, s[i+1:], nil
		case c != '\\':
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(s, i)
			if !ok {
				return "", 0, "", fmt.Errorf("bad escape in string")
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(s, i+2); ok && s[i] == '\\' && s[i+1] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r, i = d, i+6
					}
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", 0, "", fmt.Errorf("bad escape in string")
		}
	}
	return "", 0, "", fmt.Errorf("unterminated string")
}

// hex4 reads the four hexadecimal digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i:i+4], 16, 32)
	return rune(n), err == nil
}

// direct stores a token into the destinations the row readers use most
// without making it a value of an interface first (each would be an
// allocation); false when d is of another type, or the token not of
// the kind it holds.
func direct(d any, tok string, kind byte) bool {
	switch d := d.(type) {
	case *string:
		if kind == tokString {
			*d = tok
			return true
		}
	case *int64:
		if kind == tokNumber {
			if n, err := strconv.ParseInt(tok, 10, 64); err == nil {
				*d = n
				return true
			}
		}
	case *int:
		if kind == tokNumber {
			if n, err := strconv.ParseInt(tok, 10, 64); err == nil {
				*d = int(n)
				return true
			}
		}
	case *rowscan.Time:
		switch kind {
		case tokString, tokNull:
			var v any
			if kind == tokString {
				v = tok
			}
			return d.Scan(v) == nil
		}
	case *sql.NullString:
		switch kind {
		case tokString:
			*d = sql.NullString{String: tok, Valid: true}
			return true
		case tokNull:
			*d = sql.NullString{}
			return true
		}
	}
	return false
}

// tokenValue is a token as a driver would hand it over: a string, an
// int64, a float64 or nil.
func tokenValue(tok string, kind byte) (any, error) {
	switch kind {
	case tokString:
		return tok, nil
	case tokNull:
		return nil, nil
	}
	if n, err := strconv.ParseInt(tok, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return nil, fmt.Errorf("bad value %.10q", tok)
	}
	return f, nil
}

// assign stores v into d, a pointer to one of the types the row readers
// scan into.
func assign(d, v any) error {
	switch d := d.(type) {
	case *string:
		s, ok := v.(string)
		if !ok && v != nil {
			return fmt.Errorf("%T into string", v)
		}
		*d = s
	case *int64:
		n, err := packedInt(v)
		*d = n
		return err
	case *int:
		n, err := packedInt(v)
		*d = int(n)
		return err
	case *float64:
		switch v := v.(type) {
		case float64:
			*d = v
		case int64:
			*d = float64(v)
		case nil:
			*d = 0
		default:
			return fmt.Errorf("%T into float64", v)
		}
	default:
		return fmt.Errorf("cannot scan into %T", d)
	}
	return nil
}

func packedInt(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case nil:
		return 0, nil
	default:
		return 0, fmt.Errorf("%T into an integer", v)
	}
}

// packedSessionSelect are SessionColumns packed (see PackColumns),
// the last prompt and the cost beside the array (see
// packedSummarySelect).
var packedSessionSelect, packedSessionAt = packColumns(rowscan.SessionColumns, "s.last_prompt", "s.cost_usd")

// scanPackedSessions runs a query that selects PackedSessionColumns and
// reads its sessions (see Session).
func scanPackedSessions(ctx context.Context, db rowscan.Querier, live func(*loom.Lock) bool, query string, args ...any) ([]*loom.Session, error) {
	var prompt string
	var cost float64
	row := &packed{At: packedSessionAt, Beside: make([]any, 2)}
	out, err := rowscan.All(ctx, db, func(r rowscan.Scanner) (*loom.Session, error) {
		if err := r.Scan(&row.JSON, &prompt, &cost); err != nil {
			return nil, err
		}
		row.Beside[0], row.Beside[1] = prompt, cost
		return rowscan.Session(row, live)
	}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// packedMessageSelect are OwnMessageColumns packed (see PackColumns),
// the parts, the body's search text and the cost beside the array: the
// search text is the text of a body that keeps it once (see
// sqlstore.EncodeBody), and is read only for parts that end as such a
// body's do (NULL otherwise): a tool call's search text holds its input
// and output again.
var packedMessageSelect = packedMessageColumns + ", CASE WHEN " + textOnlyEnd(0) + " OR " + textOnlyEnd(1) + " THEN b.content END"

// textOnlyEnd is the SQL that says whether b.parts ends as
// sqlstore.TextOnlyEnds[i], compared as bytes: substr from the end of a
// text counts its characters from the start.
func textOnlyEnd(i int) string {
	end := sqlstore.TextOnlyEnds[i]
	return "substr(CAST(b.parts AS BLOB), -" + strconv.Itoa(len(end)) + ") = CAST('" + end + "' AS BLOB)"
}

var packedMessageColumns, packedMessageAt = packColumns(rowscan.OwnMessageColumns, "b.parts", "m.cost_usd")

// packedMessageOf returns how a row of PackedMessageColumns is read as a
// message of session, which the query reads the messages of: its id is
// not read again for each row.
func packedMessageOf(session string, salvage bool) func(rowscan.Scanner) (*loom.Message, error) {
	var parts, content rowscan.View
	var cost float64
	row := &packed{At: packedMessageAt, Beside: make([]any, 2)}
	return func(r rowscan.Scanner) (*loom.Message, error) {
		if err := r.Scan(&row.JSON, &parts, &cost, &content); err != nil {
			return nil, err
		}
		// The parts pass to the message's own text, as their bytes.
		row.Beside[0], row.Beside[1] = parts.B, cost
		m, err := rowscan.MessageIn(row, session, salvage)
		if err == nil {
			sqlstore.JoinText(m.Parts, content.B)
		}
		return m, err
	}
}

// packedSummarySelect are SummaryColumns packed (see PackColumns), the
// last prompt, the longest, beside the array: as a value of the array it
// would be escaped into JSON and back.
var packedSummarySelect, packedSummaryAt = packColumns(rowscan.SummaryColumns, "s.last_prompt")

// scanPackedSummaries runs a query that selects PackedSummaryColumns and
// reads its summaries (see Summary).
func scanPackedSummaries(ctx context.Context, db rowscan.Querier, query string, args ...any) ([]*loom.SessionSummary, error) {
	var prompt string
	row := &packed{At: packedSummaryAt, Beside: make([]any, 1)}
	out, err := rowscan.All(ctx, db, func(r rowscan.Scanner) (*loom.SessionSummary, error) {
		if err := r.Scan(&row.JSON, &prompt); err != nil {
			return nil, err
		}
		row.Beside[0] = prompt
		return rowscan.Summary(row)
	}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}
