package importertest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
)

// Follows checks that importer.Watch on root follows a session of f as
// it grows: after the first run has imported what root holds, grow
// writes to the session's files as the tool does, and a run that adds
// want messages must follow, learnt from the file system's
// notifications (the periodic rescan is an hour away, and the run
// follows a notification by Watch's quiet time, 100 ms). It returns
// the report of the run that added them.
func Follows(t testing.TB, f importer.Format, root string, grow func(), want int) *importer.ToolReport {
	t.Helper()
	st := Store(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reports := make(chan *importer.Report, 16)
	done := make(chan error, 1)
	go func() {
		im := &importer.Importer{Store: st, UserID: "alice"}
		done <- im.Watch(ctx, []importer.Target{{Format: f, Roots: []string{root}, Explicit: true}},
			importer.WatchOptions{Rescan: time.Hour}, func(r *importer.Report) { reports <- r })
	}()
	defer func() { cancel(); <-done }()
	select {
	case r := <-reports:
		if tr := r.Tools[0]; tr.SessionsNew == 0 || tr.ProblemCount != 0 {
			t.Fatalf("first watch run: %+v", tr)
		}
	case <-ctx.Done():
		t.Fatal("no first watch run")
	}
	grow()
	for {
		select {
		case r := <-reports:
			tr := r.Tools[0]
			if tr.MessagesAdded == 0 {
				continue // a run that found the write not finished
			}
			if tr.MessagesAdded != want || tr.SessionsGrown != 1 || tr.SessionsNew != 0 {
				t.Fatalf("watch run after the write: %+v, want %d messages added to the session", tr, want)
			}
			return tr
		case <-ctx.Done():
			t.Fatal("--watch did not follow the grown session")
			return nil
		}
	}
}

// ReadAll reads every bundle f finds under root, checks each result
// (Check) and returns them together: sessions and problems in
// order, skipped counts summed.
func ReadAll(t testing.TB, f importer.Format, root string) *importer.Result {
	t.Helper()
	bs, err := f.Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	all := &importer.Result{Skipped: map[string]int{}}
	for _, b := range bs {
		res, err := f.Read(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		Check(t, res)
		all.Sessions = append(all.Sessions, res.Sessions...)
		all.Problems = append(all.Problems, res.Problems...)
		for k, v := range res.Skipped {
			all.Skipped[k] += v
		}
	}
	return all
}

// AppendLines appends lines to the file at path, each ended by a
// newline, as a tool appends to its session log.
func AppendLines(t testing.TB, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Error(err)
		}
	}
}

// AppendToList appends items to the list under key of the JSON
// document at path and writes it again whole, indented, as a tool that
// keeps a session as one document saves it after a turn.
func AppendToList(t testing.TB, path, key string, items ...any) {
	t.Helper()
	EditJSON(t, path, func(doc map[string]any) {
		list, _ := doc[key].([]any)
		doc[key] = append(list, items...)
	})
}

// EditJSON reads the JSON object at path, lets edit change it, and
// writes it again whole, indented, as a tool that keeps a session as
// one document saves it.
func EditJSON(t testing.TB, path string, edit func(doc map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if data, err = json.MarshalIndent(doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// BundleNames makes files (slash-separated paths, each holding "x")
// under a new directory, and returns the bundles f finds there: their
// names relative to it, slash-separated, joined by commas.
func BundleNames(t testing.TB, f importer.Format, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range files {
		p = filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Join(BundlesUnder(t, f, root), ",")
}

// BundlesUnder is the names of the bundles f finds under root, relative
// to it and slash-separated, in the order f gives them.
func BundlesUnder(t testing.TB, f importer.Format, root string) []string {
	t.Helper()
	bs, err := f.Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range bs {
		rel, _ := filepath.Rel(root, b.Name())
		got = append(got, filepath.ToSlash(rel))
	}
	return got
}

// ImportsAndFollows checks what every reader of files a tool appends
// to must do: ImportsOnce of fixtures (sessions and messages), then, on
// a copy of fixtures (CopyDir), that Follows sees lines appended
// (AppendLines) to the file rel (relative to fixtures), each line a
// message more.
func ImportsAndFollows(t testing.TB, f importer.Format, fixtures string, sessions, messages int, rel string, lines ...string) {
	t.Helper()
	ImportsOnce(t, f, fixtures, sessions, messages)
	root := CopyDir(t, fixtures)
	Follows(t, f, root, func() { AppendLines(t, filepath.Join(root, rel), lines...) }, len(lines))
}

// ImportsAndFollowsList is ImportsAndFollows for a tool that keeps a
// session as one JSON document: the items are appended to the list
// under key of the document rel (AppendToList), each item a message
// more.
func ImportsAndFollowsList(t testing.TB, f importer.Format, fixtures string, sessions, messages int, rel, key string, items ...any) {
	t.Helper()
	ImportsOnce(t, f, fixtures, sessions, messages)
	root := CopyDir(t, fixtures)
	Follows(t, f, root, func() { AppendToList(t, filepath.Join(root, rel), key, items...) }, len(items))
}
