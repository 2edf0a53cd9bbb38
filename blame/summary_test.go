package blame

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// summaryWorld is a repository whose directory lib/ holds files of
// every kind a summary meets: agents' writes and edits a human changed
// since, a human's copies of an agent's lines (the same foreign edits
// for two files), a file renamed, a binary file, a file in the index
// alone and changes not committed.
func summaryWorld(t *testing.T) *repo {
	r := newRepo(t)
	r.write("README.md", "# summary\n")
	r.commit("start")
	r.agentWrite("s1", "lib/a.go", "package lib\n\nfunc First() {\n"+lines("alpha", 8)+"}\n")
	r.commit("a")
	r.write("lib/a.go", strings.Replace(r.read("lib/a.go"), `alpha_3 := compute(3, "alpha")`, `alpha_3 := compute(3, "alpha") + offset`, 1))
	r.agentEdit("s2", "codex", "lib/a.go", "func First() {", "func Second() {\n"+lines("beta", 4)+"}\n\nfunc First() {")
	r.commit("a again")
	a := r.read("lib/a.go")
	r.write("lib/b.go", "package lib\n\n"+a[strings.Index(a, "func Second"):strings.Index(a, "func First")])
	r.write("lib/c.go", "package lib\n\nfunc Third() {\n"+lines("alpha", 4)+"\thumanOnly := 1\n}\n")
	r.agentWrite("s3", "lib/sub/d.go", "package sub\n\nfunc Fourth() {\n"+lines("gamma", 5)+"}\n")
	r.write("lib/bin.dat", "\x00\x01\x02 binary")
	r.write("lib/human.go", "package lib\n\n// Human wrote this.\nvar human = 1\n")
	r.commit("copies")
	// Files an agent wrote whole again after a commit (what the commit
	// had of each is read), and a block a human moved from one of them
	// to a file of its own (what the file held before and after).
	for _, f := range []string{"lib/g.go", "lib/h.go"} {
		r.agentWrite("s1", f, "package lib\n\nfunc G() {\n"+lines("zeta", 4)+"}\n")
	}
	r.commit("g and h")
	for _, f := range []string{"lib/g.go", "lib/h.go"} {
		r.agentWrite("s1", f, "package lib\n\nfunc G() {\n"+lines("zeta", 4)+lines("eta", 3)+"}\n")
	}
	r.commit("g and h again")
	r.write("lib/h.go", "package lib\n\nfunc G() {\n"+lines("zeta", 4)+"}\n")
	r.write("lib/moved.go", "package lib\n\nfunc Moved() {\n"+lines("eta", 3)+"}\n")
	r.commit("moved")
	r.tick(time.Minute)
	r.git("mv", "lib/sub/d.go", "lib/sub/e.go")
	r.commit("rename")
	r.agentWrite("s3", "lib/f.go", "package lib\n\nfunc Fifth() {\n"+lines("delta", 3)+"}\n")
	r.git("add", "lib/f.go")
	r.write("lib/a.go", r.read("lib/a.go")+"\n// not committed\n")
	r.agentEdit("s2", "codex", "lib/c.go", "\thumanOnly := 1\n", "\thumanOnly := 1\n"+lines("epsilon", 2))
	return r
}

// TestSummaryIsFilesBlamed: a directory's summary, whose files' blames
// share git's and the store's answers (many.go), is what the files
// blamed one by one, each on its own, add up to: the first summary
// (nothing in the line-age cache), a second one (the cache full), one
// after new commits, and one without a cache.
func TestSummaryIsFilesBlamed(t *testing.T) {
	r := summaryWorld(t)
	ctx := context.Background()
	g := Git{Dir: r.dir}
	blamer := func(cache string) *Blamer {
		return &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Now: func() time.Time { return r.clock.Add(time.Hour) }, Cache: cache}
	}
	// want blames each file with a Blamer of its own, nothing shared.
	want := func() *Summary {
		out, err := g.run(ctx, "ls-files", "-z", "--", "lib")
		if err != nil {
			t.Fatal(err)
		}
		s, ss, notes := newSummary(g, "lib"), map[string]*Sessions{}, map[string]bool{}
		for _, f := range strings.Split(string(out), "\x00") {
			if f == "" {
				continue
			}
			res, err := blamer("").Blame(ctx, g, f, "")
			if err != nil {
				s.Skipped = append(s.Skipped, f)
				continue
			}
			s.add(ss, notes, f, res)
		}
		s.finish(ss, notes)
		return s
	}
	cache := t.TempDir()
	check := func(what string, b *Blamer) {
		t.Helper()
		got, err := b.Summarize(ctx, g, "lib")
		if err != nil {
			t.Fatal(err)
		}
		w := want()
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(w, "", " ")
		if string(gj) != string(wj) {
			t.Fatalf("%s: the summary\n%s\nthe files blamed one by one\n%s", what, gj, wj)
		}
		if got.Lines.Agent == 0 || got.Lines.Mixed == 0 || got.Lines.Human == 0 || len(got.Sessions) != 3 || len(got.Skipped) != 1 {
			t.Fatalf("%s: a summary that shows too little: %s", what, gj)
		}
	}
	check("first summary", blamer(cache))
	check("second summary", blamer(cache))
	check("without a cache", blamer(""))
	r.agentEdit("s1", "claude-code", "lib/human.go", "var human = 1\n", "var human = 1\n\nvar agentToo = \"an agent's line after the human's\"\n")
	r.commit("more")
	check("after a commit", blamer(cache))
}

// TestSummaryGitProcesses: a directory's summary runs one git blame a
// file and a few processes for the whole directory, not a handful a
// file (issue 83: `loom blame summary lib/` took 3.2 times git's own
// blame of the same files).
func TestSummaryGitProcesses(t *testing.T) {
	r := summaryWorld(t)
	bin, counts := countingGit(t)
	b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Cache: t.TempDir()}
	s, err := b.Summarize(context.Background(), Git{Bin: bin, Dir: r.dir}, "lib")
	if err != nil {
		t.Fatal(err)
	}
	calls, by := counts()
	// One blame a file, and one more of each of the two files with
	// changes not committed (what git blames of the work tree since
	// HEAD), as a file blamed alone has; the git notes listed once at
	// most (not at all: the repository holds no notes ref, which the
	// git directory found once tells); at most fifteen more processes
	// for the whole directory. The files' objects and the files of
	// each commit are read through one git cat-file --batch and one
	// git diff-tree --stdin.
	if by["blame"] != s.Files+2 || by["notes"] != 0 || calls-by["blame"] > 15 ||
		by["show"] != 0 || by["cat-file"] != 1 || by["diff-tree"] > 1 {
		t.Errorf("%d files summed by %d git processes: %v", s.Files, calls, by)
	}
}

// countingGit is a git program that counts its calls: counts gives
// their number and their number by git's command.
func countingGit(t *testing.T) (bin string, counts func() (int, map[string]int)) {
	log := filepath.Join(t.TempDir(), "calls")
	bin = filepath.Join(t.TempDir(), "git")
	script := "#!/bin/sh\necho \"$1\" >> '" + log + "'\nexec git \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, func() (int, map[string]int) {
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		calls := strings.Fields(string(data))
		by := map[string]int{}
		for _, c := range calls {
			by[c]++
		}
		return len(calls), by
	}
}

// TestPullRequestGitProcesses: blame pr shares its files' work as a
// summary does: one git blame a file of text and a few processes for
// the whole range, not a handful a file.
func TestPullRequestGitProcesses(t *testing.T) {
	r := summaryWorld(t)
	root := strings.TrimSpace(r.git("rev-list", "--max-parents=0", "HEAD"))
	files := strings.Fields(r.git("diff", "--name-only", root, "HEAD"))
	bin, counts := countingGit(t)
	b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local"}
	pr, err := b.PullRequest(context.Background(), Git{Bin: bin, Dir: r.dir}, root+"..HEAD")
	if err != nil {
		t.Fatal(err)
	}
	calls, by := counts()
	// lib/bin.dat is not blamed.
	if by["blame"] != len(files)-1 || by["show"] != 0 || calls-by["blame"] > 15 {
		t.Errorf("%d files of a range (%d with lines) counted by %d git processes: %v", len(files), len(pr.Files), calls, by)
	}
	// Each file's count is that of the file blamed on its own.
	inRange := map[string]bool{}
	for _, c := range strings.Fields(r.git("rev-list", root+"..HEAD")) {
		inRange[c] = true
	}
	for _, f := range pr.Files {
		res, err := (&Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local"}).Blame(context.Background(), Git{Dir: r.dir}, f.Path, pr.Head)
		if err != nil {
			t.Fatal(err)
		}
		var want Tally
		for _, l := range res.Lines {
			if inRange[l.Commit] {
				want.Add(l.Kind)
			}
		}
		if f.Lines != want {
			t.Errorf("%s: %+v in the pull request, %+v blamed on its own", f.Path, f.Lines, want)
		}
	}
	if pr.Lines.Agent == 0 || len(pr.Files) < 5 {
		t.Errorf("a pull request that shows too little: %+v in %d files", pr.Lines, len(pr.Files))
	}
}

// TestPullRequestKept: blame pr run again is served from what the first
// run kept (its files' line ages at the head since the range's base and
// their answers): no git blame, and the same counts; a blame of a file
// of the work tree at that head is that of no cache.
func TestPullRequestKept(t *testing.T) {
	r := summaryWorld(t)
	ctx := context.Background()
	root := strings.TrimSpace(r.git("rev-list", "--max-parents=0", "HEAD"))
	files := strings.Fields(r.git("diff", "--name-only", root, "HEAD"))
	bin, counts := countingGit(t)
	g := Git{Bin: bin, Dir: r.dir}
	cache := t.TempDir()
	blamer := func() *Blamer {
		return &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Now: func() time.Time { return r.clock.Add(time.Hour) }, Cache: cache}
	}
	first, err := blamer().PullRequest(ctx, g, root+"..HEAD")
	if err != nil {
		t.Fatal(err)
	}
	_, by := counts()
	if by["blame"] != len(files)-1 {
		t.Errorf("the first run: %d git blames for %d files of text", by["blame"], len(files)-1)
	}
	again, err := blamer().PullRequest(ctx, g, root+"..HEAD")
	if err != nil {
		t.Fatal(err)
	}
	_, by2 := counts()
	if n := by2["blame"] - by["blame"]; n != 0 {
		t.Errorf("run again, blame pr ran git blame %d times", n)
	}
	if a, b := fmt.Sprintf("%+v %+v %+v", first.Lines, first.Files, first.Sessions), fmt.Sprintf("%+v %+v %+v", again.Lines, again.Files, again.Sessions); a != b {
		t.Errorf("run again, blame pr gave\n%s\nthe first run\n%s", b, a)
	}
	if first.Lines.Agent == 0 {
		t.Errorf("a pull request with no agent line: %+v", first.Lines)
	}
	f := ""
	for _, pf := range first.Files {
		if strings.TrimSpace(r.git("status", "--porcelain", "--", pf.Path)) == "" && pf.Lines.Agent > 0 {
			f = pf.Path // as HEAD has it
			break
		}
	}
	if f == "" {
		t.Fatalf("no file of the pull request with agent lines is as HEAD has it: %+v", first.Files)
	}
	res, err := blamer().Blame(ctx, g, f, "")
	if err != nil {
		t.Fatal(err)
	}
	// The pull request's entries are of its range's commits alone
	// (git blame BASE..HEAD, a third of a whole blame's time): the work
	// tree's blame of a file asks git for the whole once.
	_, by3 := counts()
	if n := by3["blame"] - by2["blame"]; n != 1 {
		t.Errorf("%s blamed in the work tree at the pull request's head ran git blame %d times, want one whole", f, n)
	}
	want, err := (&Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Now: func() time.Time { return r.clock.Add(time.Hour) }}).Blame(ctx, Git{Dir: r.dir}, f, "")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprint(res.Lines), fmt.Sprint(want.Lines); a != b {
		t.Errorf("%s from the pull request's entries:\n%s\nblamed without a cache:\n%s", f, a, b)
	}
}

// TestSummaryPack: a directory's summary keeps its files' cache entries
// as one file, not two a file (creating them was a seventh of a cold
// summary's CPU), and a file blamed on its own after it finds its
// answer there.
func TestSummaryPack(t *testing.T) {
	r := summaryWorld(t)
	ctx := context.Background()
	g := Git{Dir: r.dir}
	cache := t.TempDir()
	blamer := func() *Blamer {
		return &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Now: func() time.Time { return r.clock.Add(time.Hour) }, Cache: cache}
	}
	s, err := blamer().Summarize(ctx, g, "lib")
	if err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		if de.Name() != agePruneCount {
			names = append(names, de.Name())
		}
	}
	if len(names) != 1 || !strings.HasSuffix(names[0], packSuffix) {
		t.Fatalf("the cache after a summary of %d files holds %v", s.Files, names)
	}
	b := blamer()
	got, err := b.Blame(ctx, g, "lib/human.go", "")
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Now: func() time.Time { return r.clock.Add(time.Hour) }}).Blame(ctx, g, "lib/human.go", "")
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Fatalf("lib/human.go blamed from the pack\n%s\nwithout a cache\n%s", gj, wj)
	}
	if u := b.ageCache().used; u.hit+u.kept == 0 || u.whole != 0 {
		t.Errorf("lib/human.go after the summary did not find its entries in the pack: %+v", u)
	}
	// A second summary reads the pack and writes nothing.
	if _, err := blamer().Summarize(ctx, g, "lib"); err != nil {
		t.Fatal(err)
	}
	if des, _ := os.ReadDir(cache); len(slices.DeleteFunc(des, func(de os.DirEntry) bool { return de.Name() == agePruneCount })) != 1 {
		t.Errorf("the cache after a second summary holds %d files (besides the count of processes)", len(des))
	}
	// A summary of lib/ after one of the whole repository finds its
	// files' entries in the whole repository's pack.
	cache = t.TempDir()
	if _, err := blamer().Summarize(ctx, g, ""); err != nil {
		t.Fatal(err)
	}
	b = blamer()
	if _, err := b.Summarize(ctx, g, "lib"); err != nil {
		t.Fatal(err)
	}
	if u := b.ageCache().used; u.hit+u.kept == 0 || u.whole != 0 {
		t.Errorf("a summary of lib/ after one of the repository did not find its entries in the pack: %+v", u)
	}
}
