package blame

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/cli/command"
)

// TestResultJSON: loom blame --json writes a result as the generic
// writer (command.WriteJSON) does, byte for byte: every field of a line
// set (a field added to blame.Line and not to writeResultJSON fails
// here), none set, strings JSON and HTML escape and terminals must not
// see raw (C1 controls, DEL), times with nanoseconds and zones, no
// lines, no notes.
func TestResultJSON(t *testing.T) {
	odd := "a <b> & \"c\" \\ \t\x01 \u2028 \x7f \u0085 é \xff"
	at := time.Date(2026, 3, 1, 9, 0, 0, 123456789, time.FixedZone("x", 3600))
	var full blame.Line
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(v.Type().Field(i).Name + " " + odd)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 7))
		case reflect.Pointer:
			f.Set(reflect.ValueOf(&at))
		default:
			t.Fatalf("blame.Line.%s is a %s: writeResultJSON does not know it", v.Type().Field(i).Name, f.Kind())
		}
	}
	utc := at.UTC()
	cases := map[string]*blame.Result{
		"every field": {Repo: "/r", Path: "a.go", Revision: "abc", Lines: []blame.Line{full, {N: 2, Kind: "human", Text: ""},
			{N: 3, Kind: "agent", SessionID: "s", Seq: -1, At: &utc, Text: "x := 1"}}, Notes: []string{"one", odd}},
		"no lines":  {Repo: "/r", Path: "a.go", Lines: []blame.Line{}, Notes: []string{}},
		"nil lines": {Repo: "/r", Path: "<a>.go"},
		"one line":  {Repo: "/r", Path: "a.go", Lines: []blame.Line{{N: 1, Kind: "unknown", Commit: "c", Text: "y"}}},
		"repeated":  {Repo: "/r", Path: "a.go", Lines: []blame.Line{full, full, full}},
	}
	for name, res := range cases {
		sameJSON(t, name, res)
	}
}

// sameJSON checks that writeResultJSON writes res as command.WriteJSON
// does.
func sameJSON(t *testing.T, name string, res *blame.Result) {
	t.Helper()
	var want, got bytes.Buffer
	if err := command.WriteJSON(&want, res); err != nil {
		t.Fatal(err)
	}
	if err := writeResultJSON(&got, res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("%s: writeResultJSON wrote\n%s\nwant\n%s", name, got.Bytes(), want.Bytes())
	}
}

// TestResultJSONPieces: a result of many lines, written in pieces, is
// the generic writer's output whole, and a write that fails is the
// error.
func TestResultJSONPieces(t *testing.T) {
	res := &blame.Result{Repo: "/r", Path: "a.go"}
	for i := range 3000 {
		res.Lines = append(res.Lines, blame.Line{N: i + 1, Kind: "agent", SessionID: "s\u0085", Text: "line \u0085 é <x>"})
	}
	sameJSON(t, "3,000 lines", res)
	if err := writeResultJSON(failingWriter{}, res); err == nil {
		t.Error("a write that fails: no error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
