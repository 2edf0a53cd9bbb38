package paths

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestNormalizeRemote(t *testing.T) {
	root := filepath.FromSlash("/home/me/src/api")
	for _, tc := range []struct{ url, want string }{
		// One repository, every way of writing it.
		{"git@github.com:a/b.git", "github.com/a/b"},
		{"ssh://git@github.com/a/b", "github.com/a/b"},
		{"https://github.com/a/b", "github.com/a/b"},
		{"https://user@github.com/a/b.git/", "github.com/a/b"},
		{"https://user:token@GitHub.COM/a/b.git", "github.com/a/b"},
		{"http://github.com/a/b/", "github.com/a/b"},
		{"git://github.com/a/b.git", "github.com/a/b"},
		{"ssh://git@github.com:22/a/b.git", "github.com/a/b"},
		{"git+ssh://git@github.com/a/b", "github.com/a/b"},
		{"github.com:a/b", "github.com/a/b"},
		{"git@github.com:/a/b.git", "github.com/a/b"},
		{"[git@github.com:22]:a/b.git", "github.com/a/b"},
		{"  https://github.com/a/b.git\n", "github.com/a/b"},
		{"https://github.com//a//b", "github.com/a/b"},
		{"https://github.com/a/b?ref=x#readme", "github.com/a/b"},
		// The path keeps its case; nested groups stay.
		{"git@GitLab.example.com:Group/Sub/Repo.git", "gitlab.example.com/Group/Sub/Repo"},
		{"https://[::1]:8080/a/b.git", "[::1]/a/b"},
		// Directories: absolute, relative to the work tree, file URLs.
		{"/srv/git/api.git", "/srv/git/api"},
		{"/srv/git/api/.git", "/srv/git/api"},
		{"file:///srv/git/api.git/", "/srv/git/api"},
		{"file://localhost/srv/git/api", "/srv/git/api"},
		{"../upstream.git", "/home/me/src/upstream"},
		// Nothing to identify.
		{"", ""},
		{"https://github.com/", ""},
		{"https://github.com", ""},
		{"git@:a/b", ""},
		{"/", ""},
		{"file://", ""},
	} {
		if got := NormalizeRemote(tc.url, root); got != filepath.ToSlash(tc.want) {
			t.Errorf("NormalizeRemote(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
	if got := RepoName("github.com/a/b"); got != "b" {
		t.Errorf("RepoName = %q, want b", got)
	}
}

func TestParseGitConfig(t *testing.T) {
	v := func(section, sub, key, value string) configVar { return configVar{section, sub, key, value} }
	for _, tc := range []struct {
		name, text string
		want       []configVar
		bad        bool
	}{
		{"what git init and git remote add write",
			"[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:a/b.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
			[]configVar{v("core", "", "repositoryformatversion", "0"), v("core", "", "bare", "false"),
				v("remote", "origin", "url", "git@github.com:a/b.git"), v("remote", "origin", "fetch", "+refs/heads/*:refs/remotes/origin/*")}, false},
		{"case, comments, a key without a value",
			"; top\n[Remote \"Up\"] URL = x # trailing\n# whole line\n[core]\nbare\n",
			[]configVar{v("remote", "Up", "url", "x"), v("core", "", "bare", "")}, false},
		{"the old dotted header",
			"[remote.Origin]\nurl=y\n", []configVar{v("remote", "origin", "url", "y")}, false},
		{"quotes, escapes, inner spaces, continuation",
			"[a \"s\\\"q\"]\nk = \" x ; y \" z\\tw  v\nl = one\\\n two\r\n",
			[]configVar{v("a", "s\"q", "k", " x ; y  z\tw  v"), v("a", "s\"q", "l", "one two")}, false},
		{"a byte order mark", "\xef\xbb\xbf[a]\nk=v", []configVar{v("a", "", "k", "v")}, false},
		{"empty", "", nil, false},
		{"a key before any section", "url = x\n", nil, true},
		{"an unclosed header", "[remote \"origin\"\nurl = x\n", nil, true},
		{"an unterminated quote", "[a]\nk = \"x\n", nil, true},
		{"an unknown escape", "[a]\nk = \\q\n", nil, true},
		{"a stray character", "[a]\n= x\n", nil, true},
	} {
		got, err := parseGitConfig([]byte(tc.text))
		if (err != nil) != tc.bad {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.bad)
			continue
		}
		if !tc.bad && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	if _, err := parseGitConfig([]byte("[a]\nk = 1\n\n[b\nk = 2\n")); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("error %v does not name line 4", err)
	}
}

func TestRemoteURL(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"origin first", "[remote \"fork\"]\nurl = f\n[remote \"origin\"]\nurl = o\n", "o"},
		{"else the first remote", "[remote \"fork\"]\nurl = f\n[remote \"up\"]\nurl = u\n", "f"},
		{"origin's first url", "[remote \"origin\"]\nurl = one\nurl = two\n", "one"},
		{"a remote without url does not count", "[remote \"origin\"]\nfetch = x\n[remote \"up\"]\nurl = u\n", "u"},
		{"no remote", "[core]\nbare = false\n", ""},
		{"insteadOf, the longest prefix",
			"[url \"git@github.com:\"]\ninsteadOf = gh:\n[url \"git@github.com:acme/\"]\ninsteadOf = gh:acme/\n[remote \"origin\"]\nurl = gh:acme/api\n",
			"git@github.com:acme/api"},
		{"an insteadOf that does not match", "[url \"x:\"]\ninsteadOf = gl:\n[remote \"origin\"]\nurl = gh:a/b\n", "gh:a/b"},
	} {
		vars, err := parseGitConfig([]byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := remoteURL(vars); got != tc.want {
			t.Errorf("%s: remoteURL = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// git runs git in dir, isolated from the user's and the system's config.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// clone makes a git work tree at dir whose origin is url.
func clone(t *testing.T, dir, url string) string {
	t.Helper()
	mkdirs(t, dir)
	git(t, dir, "init", "-q")
	if url != "" {
		git(t, dir, "remote", "add", "origin", url)
	}
	return dir
}

// Two clones of one repository, at different paths under different
// names, are one project named after the repository, each with its own
// root; a work tree without a remote keeps the path rule.
func TestDetectProjectByRemote(t *testing.T) {
	base := realTempDir(t)
	a := clone(t, filepath.Join(base, "laptop", "src", "api"), "git@github.com:acme/api.git")
	b := clone(t, filepath.Join(base, "desktop", "work", "api-service"), "https://github.com/acme/api")
	plain := clone(t, filepath.Join(base, "scratch"), "")
	pa, err := DetectProject(mkdirs(t, a, "pkg", "x"))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := DetectProject(b)
	if err != nil {
		t.Fatal(err)
	}
	if pa.ID != sha16("github.com/acme/api") || pa.ID != pb.ID {
		t.Errorf("ids %q and %q, want both %q", pa.ID, pb.ID, sha16("github.com/acme/api"))
	}
	if pa.Name != "api" || pb.Name != "api" {
		t.Errorf("names %q and %q, want the repository's, api", pa.Name, pb.Name)
	}
	if pa.Root != a || pb.Root != b {
		t.Errorf("roots %q and %q, want %q and %q", pa.Root, pb.Root, a, b)
	}
	if UsesPath(pa) {
		t.Error("a project with a remote uses the path rule")
	}
	pp, err := DetectProject(plain)
	if err != nil {
		t.Fatal(err)
	}
	if want := pathProject(plain); pp != want || !UsesPath(pp) {
		t.Errorf("no remote: %+v, want %+v", pp, want)
	}
	// Another remote than origin counts when it is the only one.
	git(t, plain, "remote", "add", "upstream", "ssh://git@example.org/team/scratch.git")
	if pp, _ := DetectProject(plain); pp.ID != sha16("example.org/team/scratch") || pp.Name != "scratch" {
		t.Errorf("only remote upstream: %+v", pp)
	}
}

// A worktree made by git worktree add reads its repository's config
// through commondir: it is the repository's project, rooted at itself.
func TestDetectProjectWorktree(t *testing.T) {
	base := realTempDir(t)
	main := clone(t, filepath.Join(base, "api"), "https://github.com/acme/api.git")
	writeFile(t, filepath.Join(main, "README"), "hi\n")
	git(t, main, "add", "README")
	git(t, main, "commit", "-q", "-m", "first")
	wt := filepath.Join(base, "api-hotfix")
	git(t, main, "worktree", "add", "-q", "-b", "hotfix", wt)
	p, err := DetectProject(mkdirs(t, wt, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != sha16("github.com/acme/api") || p.Name != "api" || p.Root != wt {
		t.Errorf("worktree: %+v", p)
	}
	if GitBranch(wt) != "hotfix" {
		t.Errorf("GitBranch(worktree) = %q", GitBranch(wt))
	}
}

// A submodule's .git is a file naming its git directory in the
// superproject's .git/modules: the submodule is the project of its own
// remote, the superproject of its.
func TestDetectProjectSubmoduleGitFile(t *testing.T) {
	base := realTempDir(t)
	outer := clone(t, filepath.Join(base, "app"), "git@github.com:acme/app.git")
	modules := mkdirs(t, outer, ".git", "modules", "lib")
	writeFile(t, filepath.Join(modules, "config"), "[core]\n\tworktree = ../../../vendor/lib\n[remote \"origin\"]\n\turl = https://github.com/acme/lib.git\n")
	sub := mkdirs(t, outer, "vendor", "lib")
	writeFile(t, filepath.Join(sub, ".git"), "gitdir: ../../.git/modules/lib\n")
	p, err := DetectProject(mkdirs(t, sub, "src"))
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != sha16("github.com/acme/lib") || p.Name != "lib" || p.Root != sub {
		t.Errorf("submodule: %+v", p)
	}
	if p, _ := DetectProject(outer); p.ID != sha16("github.com/acme/app") {
		t.Errorf("superproject: %+v", p)
	}
}

// A config loom cannot read or parse leaves the project to the path
// rule: git itself reports the broken file, and a command never fails
// over it.
func TestDetectProjectBrokenConfig(t *testing.T) {
	base := realTempDir(t)
	for name, config := range map[string]string{
		"unparsable":  "[remote \"origin\"\n\turl = git@github.com:acme/api.git\n",
		"a directory": "",
	} {
		root := clone(t, filepath.Join(base, strings.ReplaceAll(name, " ", "-")), "git@github.com:acme/api.git")
		path := filepath.Join(root, ".git", "config")
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if config == "" {
			mkdirs(t, path)
		} else {
			writeFile(t, path, config)
		}
		if _, err := remoteOf(root); err == nil {
			t.Errorf("%s: remoteOf succeeded", name)
		}
		p, err := DetectProject(root)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := pathProject(root); p != want {
			t.Errorf("%s: %+v, want the path rule's %+v", name, p, want)
		}
	}
}

func FuzzNormalizeRemote(f *testing.F) {
	for _, s := range []string{"git@github.com:a/b.git", "ssh://git@github.com:22/a/b", "https://u@GitHub.com/a/b.git/",
		"[git@h:22]:a/b", "file:///srv/a.git", "../up", "C:/repos/a", "https://[::1]:80/x", "::", "@:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		got := NormalizeRemote(url, "/root/dir")
		if strings.HasSuffix(got, "/") {
			t.Errorf("NormalizeRemote(%q) = %q keeps a trailing slash", url, got)
		}
		if strings.Contains(got, "://") {
			t.Errorf("NormalizeRemote(%q) = %q keeps a scheme", url, got)
		}
		// The scp-like and https forms of a plain host and path agree.
		host, p, ok := strings.Cut(url, "/")
		if !ok || host == "" || p == "" || strings.HasSuffix(p, ".git") || strings.ContainsAny(url, ":@[]?#\\ \t\n\r\v\f") {
			return
		}
		scp, https := NormalizeRemote("git@"+host+":"+p+".git", "/"), NormalizeRemote("https://"+host+"/"+p, "/")
		if scp != https {
			t.Errorf("%q: scp-like %q, https %q", url, scp, https)
		}
	})
}

func FuzzParseGitConfig(f *testing.F) {
	for _, s := range []string{"[remote \"origin\"]\n\turl = git@github.com:a/b.git\n", "[a.b]\nk=\"v\\\"\" ; c\n", "[url \"x\"]\ninsteadOf = y\\\nz", "\xef\xbb\xbf[a]k"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		vars, err := parseGitConfig(b)
		if err != nil {
			return
		}
		for _, v := range vars {
			if v.section == "" || v.key == "" || v.section != strings.ToLower(v.section) || v.key != strings.ToLower(v.key) {
				t.Fatalf("parsed %q into %+v", b, v)
			}
		}
		_ = NormalizeRemote(remoteURL(vars), "/root")
	})
}

// The worktrees of a repository without a remote are its project too,
// each rooted at itself: what one recalls, the others find.
func TestDetectProjectWorktreeWithoutRemote(t *testing.T) {
	base := realTempDir(t)
	main := filepath.Join(base, "api")
	git(t, base, "init", "-q", main)
	writeFile(t, filepath.Join(main, "README"), "hi\n")
	git(t, main, "add", "README")
	git(t, main, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first")
	wt := filepath.Join(base, "api-search")
	git(t, main, "worktree", "add", "-q", "-b", "search", wt)
	pm, err := DetectProject(main)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := DetectProject(mkdirs(t, wt, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if pw.ID != pm.ID || pm.ID != ProjectID(main) || pw.Name != "api" || pw.Root != wt || pm.Root != main {
		t.Errorf("main %+v, worktree %+v", pm, pw)
	}
	if UsesPath(pw) || !UsesPath(pm) {
		t.Errorf("the worktree's sessions recorded by its own path must move to the repository's: %+v", pw)
	}
}
