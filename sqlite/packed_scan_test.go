package sqlite

import (
	"database/sql"
	"testing"

	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

func TestPacked(t *testing.T) {
	var (
		s, esc, empty string
		n, neg        int64
		i             int
		f, real       float64
		ns            sql.NullString
		ni            sql.NullInt64
		tm            rowscan.Time
	)
	p := &packed{JSON: `["plain","a\"b\\c\né\u0001",null,12345678901234,-7,3,1.5e+300,"",null,null,"2024-01-02T03:04:05.123Z"]`,
		At: []int{11}, Beside: []any{0.30000000000000004}}
	if err := p.Scan(&s, &esc, &ns, &n, &neg, &i, &f, &empty, &ni, &real, &tm, &real); err != nil {
		t.Fatal(err)
	}
	if s != "plain" || esc != "a\"b\\c\né\x01" || ns.Valid || n != 12345678901234 || neg != -7 || i != 3 ||
		f != 1.5e300 || empty != "" || ni.Valid || real != 0.30000000000000004 || !tm.Valid || tm.T.Nanosecond() != 123e6 {
		t.Errorf("got %q %q %v %d %d %d %g %q %v %v %v", s, esc, ns, n, neg, i, f, empty, ni, real, tm)
	}
	for _, bad := range []string{`[1,2]`, `[1,2,3,4]`, `{}`, `["x`, `[nul,1,2]`} {
		var a, b, c any = new(int64), new(int64), new(int64)
		if err := (&packed{JSON: bad}).Scan(a, b, c); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestPackColumns(t *testing.T) {
	sql, at := packColumns("a.x, b.y,\n\tc.z, d.w", "b.y", "d.w")
	if sql != "json_array(a.x, c.z), b.y, d.w" || len(at) != 2 || at[0] != 1 || at[1] != 3 {
		t.Errorf("got %q %v", sql, at)
	}
}

func TestPackedStrings(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`:                    "plain",
		`"a\"b\\c\/d\b\f\n\r\t"`:     "a\"b\\c/d\b\f\n\r\t",
		`"\u0001é\ud83d\ude00x"`:     "\x01é😀x",
		"\"bad \xff utf-8 \\n\xfe\"": "bad \xff utf-8 \n\xfe",
		`"lone \ud83d"`:              "lone \uFFFD",
	} {
		var got string
		if err := (&packed{JSON: "[" + in + "]"}).Scan(&got); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`["\x"]`, `["\u12"]`, `["abc\"]`} {
		var s string
		if err := (&packed{JSON: bad}).Scan(&s); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
