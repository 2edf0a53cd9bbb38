package importer

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// SetLinkPage makes linkFromParent read a parent's messages n at a
// time for the rest of t.
func SetLinkPage(t *testing.T, n int) {
	old := linkPage
	linkPage = n
	t.Cleanup(func() { linkPage = old })
}

func elements(t *testing.T, r io.Reader) ([]string, []int, error) {
	t.Helper()
	var got []string
	var long []int
	err := Elements(context.Background(), r, func(i int, elem []byte) error {
		if i != len(got)+len(long) {
			t.Errorf("element %d after %d", i, len(got)+len(long))
		}
		got = append(got, string(elem))
		return nil
	}, func(i int) { long = append(long, i) })
	return got, long, err
}

func TestElements(t *testing.T) {
	got, _, err := elements(t, strings.NewReader(` [ {"a": "x]}\"{"} ,[1,[2]], "s,]" , 12.5e3,null,true ] trailing`))
	want := []string{`{"a": "x]}\"{"}`, `[1,[2]]`, `"s,]"`, `12.5e3`, `null`, `true`}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, %v", got, err)
	}
	if got, _, err := elements(t, strings.NewReader("\xef\xbb\xbf[1]")); err != nil || len(got) != 1 {
		t.Errorf("after a byte order mark: %q, %v", got, err)
	}
	if got, _, err := elements(t, strings.NewReader("[]")); err != nil || len(got) != 0 {
		t.Errorf("empty array: %q, %v", got, err)
	}
	for _, in := range []string{"", "{}", "  x"} {
		if _, _, err := elements(t, strings.NewReader(in)); !errors.Is(err, ErrNotArray) {
			t.Errorf("%q: %v", in, err)
		}
	}
	got, _, err = elements(t, strings.NewReader(`[{"a":1},{"b":`))
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 1 {
		t.Errorf("cut: %q, %v", got, err)
	}
	// An element over MaxElement is skipped without being held; the
	// next is read.
	huge := io.MultiReader(strings.NewReader(`[{"a":"`), io.LimitReader(repeat('x'), MaxElement+10), strings.NewReader(`"},{"b":2}]`))
	got, long, err := elements(t, huge)
	if err != nil || len(long) != 1 || long[0] != 0 || len(got) != 1 || got[0] != `{"b":2}` {
		t.Errorf("huge: %d read, %v too long, %v", len(got), long, err)
	}
}

type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func TestIsExportFile(t *testing.T) {
	for name, want := range map[string]bool{"conversations.json": true, "conversations-000.json": true, "conversations-.json": false, "conversations-a.json": false, "chat.html": false} {
		if IsExportFile(name) != want {
			t.Errorf("%s: %v", name, !want)
		}
	}
}
