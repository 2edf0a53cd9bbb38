package releasetest

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// The ways to install loom that README.md's "Install and run" shows, in
// the order it shows them: each is the first line of its own ```sh
// block, and each is run or checked by the test named beside it.
var installWays = []struct{ prefix, test string }{
	{"curl -fsSL ", "TestInstallFromReadme"},
	{"brew install ", "TestBrewFromReadme"},
	{"docker run -d ", "TestImage"},
	{"go install ", "TestGoInstallFromReadme"},
	{"sha256sum --ignore-missing -c checksums.txt", "TestArchiveFromReadme"},
}

// repoRoot is the repository: tools/release/releasetest is three down.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// installBlocks is each ```sh block of README.md's "Install and run"
// section, in order, as its lines.
func installBlocks(t *testing.T, root string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	in, block := false, false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "## Install and run":
			in = true
		case in && strings.HasPrefix(line, "## "):
			return blocks
		case in && !block && line == "```sh":
			block = true
			blocks = append(blocks, nil)
		case in && block && line == "```":
			block = false
		case in && block:
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], line)
		}
	}
	if !in {
		t.Fatal(`README.md has no section "## Install and run"`)
	}
	return blocks
}

// readmeLine is the line of README.md's "Install and run" commands that
// starts with prefix.
func readmeLine(t *testing.T, root, prefix string) string {
	t.Helper()
	for _, block := range installBlocks(t, root) {
		for _, line := range block {
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
	}
	t.Fatalf("README.md's Install and run has no line starting %q", prefix)
	return ""
}

// TestReadmeInstallOrder: README.md's "Install and run" shows the
// one-line install first, then Homebrew, the hub's image, go install and
// the archives, each a block of one line, so that each line shown is the
// one its test runs. A line added among them, or one moved, fails here.
func TestReadmeInstallOrder(t *testing.T) {
	blocks := installBlocks(t, repoRoot(t))
	if len(blocks) < len(installWays) {
		t.Fatalf("README.md's Install and run has %d command blocks, want the %d ways to install first: %q", len(blocks), len(installWays), blocks)
	}
	for i, way := range installWays {
		if len(blocks[i]) != 1 || !strings.HasPrefix(blocks[i][0], way.prefix) {
			t.Errorf("README.md's Install and run block %d is %q, want one line starting %q (run by %s)", i+1, blocks[i], way.prefix, way.test)
		}
	}
}

// TestGoInstallFromReadme runs README.md's `go install …@latest` line as
// written against a module proxy in a directory that serves this
// repository's HEAD as the module's latest version (the version
// proxy.golang.org would give that commit: its tag, else a
// pseudo-version), then the loom it installed. The module's own
// requirements come from this machine's module cache, through the same
// proxy protocol, checked against the module's go.sum.
func TestGoInstallFromReadme(t *testing.T) {
	root := repoRoot(t)
	line := readmeLine(t, root, "go install ")
	fields := strings.Fields(line)
	if len(fields) != 3 {
		t.Fatalf("README.md's go install line is not `go install PACKAGE@latest`: %s", line)
	}
	pkg, query, _ := strings.Cut(fields[2], "@")
	if query != "latest" {
		t.Fatalf("README.md's go install line installs %q, not @latest: %s", query, line)
	}
	for _, c := range []string{"go", "git"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not installed", c)
		}
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	modPath := modfile.ModulePath(gomod)
	if !strings.HasPrefix(pkg, modPath+"/") {
		t.Fatalf("README.md's go install line installs %s, outside the module %s", pkg, modPath)
	}
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	rev, err := git("rev-parse", "HEAD")
	if err != nil {
		t.Skipf("%s is not a git checkout (%v): the module is made from its HEAD", root, err)
	}
	version, when := moduleVersion(t, git, rev)
	t.Logf("serving %s@%s (HEAD %s) as @latest", modPath, version, rev[:12])

	// The proxy: list, @latest, and the version's .info, .mod and .zip
	// (https://go.dev/ref/mod#goproxy-protocol).
	proxy := t.TempDir()
	dir := filepath.Join(proxy, escapePath(t, modPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when})
	if err != nil {
		t.Fatal(err)
	}
	list := ""
	if !module.IsPseudoVersion(version) {
		list = version + "\n" // a proxy lists tagged versions only
	}
	modAtRev, err := exec.Command("git", "-C", root, "show", rev+":go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		filepath.Join(dir, "list"):          []byte(list),
		filepath.Join(dir, "..", "@latest"): info,
		filepath.Join(dir, version+".info"): info,
		filepath.Join(dir, version+".mod"):  modAtRev,
	} {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The module's files are the commit's, as git archive gives them
	// (the proxy's are too); the zip is made as the go command makes it.
	tree := t.TempDir()
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", rev)
	untar := exec.Command("tar", "-x", "-C", tree)
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s | tar -x: %v\n%s", rev, err, out)
	}
	if err := archive.Wait(); err != nil {
		t.Fatalf("git archive %s: %v", rev, err)
	}
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.CreateFromDir(zf, module.Version{Path: modPath, Version: version}, tree); err != nil {
		t.Fatalf("the module's zip of %s: %v", rev, err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	checkModuleZip(t, filepath.Join(dir, version+".zip"), modPath, version, pkg)

	goenv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	downloads := filepath.Join(goenv("GOMODCACHE"), "cache", "download")
	gopath := t.TempDir()
	env := []string{
		"GOPATH=" + gopath,
		// The build cache is this machine's: only loom's own packages
		// compile again.
		"GOCACHE=" + goenv("GOCACHE"),
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(downloads),
		// Nothing of this commit is in the checksum database, and the
		// database is not reached from here: each module downloaded is
		// checked against the module's go.sum below instead.
		"GOSUMDB=off",
		"GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -modcacherw"),
		"GOTOOLCHAIN=local",
	}
	if v, ok := os.LookupEnv("CGO_ENABLED"); ok {
		env = append(env, "CGO_ENABLED="+v)
	}
	start := time.Now()
	res := shTimeout(t, 15*time.Minute, line, env...)
	if res.err != nil {
		t.Fatalf("%s: %v\n%s%s", line, res.err, res.stdout, res.stderr)
	}
	t.Logf("%s: %s", line, time.Since(start).Round(time.Second))
	checkSums(t, filepath.Join(gopath, "pkg", "mod", "cache", "download"), modPath, version, root, rev)
	loom := filepath.Join(gopath, "bin", filepath.Base(pkg))
	out, err := exec.Command(loom, "version").CombinedOutput()
	want := fmt.Sprintf("loom %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if err != nil || string(out) != want {
		t.Errorf("%s version: %q (%v), want %q", loom, out, err, want)
	}
}

// moduleVersion is the version the module proxy gives the commit rev:
// its tag, else a pseudo-version after the newest tag before it, with
// the commit's time.
func moduleVersion(t *testing.T, git func(...string) (string, error), rev string) (string, time.Time) {
	t.Helper()
	secs, err := git("log", "-1", "--format=%ct", rev)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		t.Fatalf("the commit's time %q: %v", secs, err)
	}
	when := time.Unix(n, 0).UTC()
	if tag, err := git("describe", "--tags", "--exact-match", "--match", "v[0-9]*", rev); err == nil && semver.IsValid(tag) && semver.Build(tag) == "" {
		return tag, when
	}
	older := ""
	if tag, err := git("describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", rev); err == nil && semver.IsValid(tag) {
		older = tag
	}
	return module.PseudoVersion("", older, when, rev[:12]), when
}

// checkSums: every module go install downloaded into the module cache
// under downloads, but the module itself, has the hash the module's
// go.sum at rev gives it.
func checkSums(t *testing.T, downloads, modPath, version, root, rev string) {
	t.Helper()
	gosum, err := exec.Command("git", "-C", root, "show", rev+":go.sum").Output()
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]bool{}
	for _, line := range strings.Split(string(gosum), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			sums[f[0]+" "+f[1]+" "+f[2]] = true
		}
	}
	n := 0
	err = filepath.WalkDir(downloads, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".ziphash") {
			return err
		}
		rel, err := filepath.Rel(downloads, path)
		if err != nil {
			return err
		}
		escMod, file, ok := strings.Cut(filepath.ToSlash(rel), "/@v/")
		if !ok {
			return fmt.Errorf("%s is no module's hash", rel)
		}
		mod, err := module.UnescapePath(escMod)
		if err != nil {
			return err
		}
		ver, err := module.UnescapeVersion(strings.TrimSuffix(file, ".ziphash"))
		if err != nil {
			return err
		}
		if mod == modPath && ver == version {
			return nil
		}
		hash, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if !sums[mod+" "+ver+" "+strings.TrimSpace(string(hash))] {
			t.Errorf("%s@%s was installed with hash %s, not the one go.sum gives it", mod, ver, bytes.TrimSpace(hash))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("go install downloaded no module into the module cache")
	}
	t.Logf("%d modules downloaded, each with go.sum's hash", n)
}

func escapePath(t *testing.T, path string) string {
	t.Helper()
	e, err := module.EscapePath(path)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.FromSlash(e)
}

// checkModuleZip: the module's zip holds go.mod and the command.
func checkModuleZip(t *testing.T, path, modPath, version, pkg string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = zr.Close() }()
	prefix := modPath + "@" + version + "/"
	cmdDir := prefix + strings.TrimPrefix(pkg, modPath+"/") + "/"
	var mod, cmd bool
	for _, f := range zr.File {
		mod = mod || f.Name == prefix+"go.mod"
		cmd = cmd || strings.HasPrefix(f.Name, cmdDir) && strings.HasSuffix(f.Name, ".go")
	}
	if !mod || !cmd {
		t.Fatalf("the module's zip (%d files) lacks go.mod (%v) or %s (%v)", len(zr.File), mod, cmdDir, cmd)
	}
	fi, err := os.Stat(path)
	if err == nil {
		t.Logf("the module's zip: %d files, %d bytes", len(zr.File), fi.Size())
	}
}

// shTimeout is sh with a longer time allowed.
func shTimeout(t *testing.T, d time.Duration, line string, env ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return result{stdout: out.String(), stderr: errb.String(), err: err}
}

// TestBrewFromReadme: README.md's `brew install OWNER/TAP/FORMULA` names
// the tap and the formula the release writes. Homebrew reads
// OWNER/TAP/FORMULA as the formula FORMULA of the repository
// github.com/OWNER/homebrew-TAP, in its Formula/ directory; GoReleaser's
// brews section says where the formula goes and what it is called; and
// the snapshot's formula (where LOOM_RELEASE_DIST names one) is that
// file, defining the class Homebrew looks for. Nothing here runs brew:
// the formula's syntax is TestFormula's.
func TestBrewFromReadme(t *testing.T) {
	root := repoRoot(t)
	line := readmeLine(t, root, "brew install ")
	fields := strings.Fields(line)
	parts := strings.Split(fields[len(fields)-1], "/")
	if len(fields) != 3 || len(parts) != 3 {
		t.Fatalf("README.md's brew line is not `brew install OWNER/TAP/FORMULA`: %s", line)
	}
	owner, tap, formula := parts[0], parts[1], parts[2]

	b, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Brews []struct {
			Name       string `yaml:"name"`
			Directory  string `yaml:"directory"`
			Repository struct {
				Owner string `yaml:"owner"`
				Name  string `yaml:"name"`
			} `yaml:"repository"`
		} `yaml:"brews"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(cfg.Brews) != 1 {
		t.Fatalf(".goreleaser.yaml has %d brews, want one", len(cfg.Brews))
	}
	brew := cfg.Brews[0]
	if brew.Repository.Owner != owner || brew.Repository.Name != "homebrew-"+tap || brew.Directory != "Formula" || brew.Name != formula {
		t.Errorf("README.md's %q installs the formula %s from github.com/%s/homebrew-%s/Formula; .goreleaser.yaml writes %s to github.com/%s/%s/%s",
			line, formula, owner, tap, brew.Name, brew.Repository.Owner, brew.Repository.Name, brew.Directory)
	}

	dist := os.Getenv("LOOM_RELEASE_DIST")
	if dist == "" {
		t.Log("LOOM_RELEASE_DIST names no release: the formula itself is not checked")
		return
	}
	path := filepath.Join(dist, "homebrew", "Formula", formula+".rb")
	rb, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the snapshot has no formula %s: %v", formula, err)
	}
	// Homebrew's class for a formula name: each part between - or _
	// capitalised (loom: Loom).
	var class strings.Builder
	for _, p := range strings.FieldsFunc(formula, func(r rune) bool { return r == '-' || r == '_' }) {
		class.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	if !bytes.Contains(rb, []byte("\nclass "+class.String()+" < Formula\n")) {
		t.Errorf("%s defines no class %s < Formula", path, class.String())
	}
}
