package releasetest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// release is the snapshot under test.
type release struct {
	dist    string // GoReleaser's dist directory
	key     string // the public key that signed checksums.txt
	version string // 0.0.1-snapshot-abc1234
	tag     string // the git tag the release is made from; v0.0.0 for a snapshot of a clone with none
	root    string // the repository
}

func setup(t *testing.T) release {
	t.Helper()
	dist, key := os.Getenv("LOOM_RELEASE_DIST"), os.Getenv("LOOM_RELEASE_KEY")
	if dist == "" || key == "" {
		t.Skip("LOOM_RELEASE_DIST and LOOM_RELEASE_KEY name no release: .ci/release-snapshot sets them")
	}
	var meta struct {
		Version string `json:"version"`
		Tag     string `json:"tag"`
	}
	b, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil || meta.Version == "" {
		t.Fatalf("metadata.json names no version (%v): %s", err, b)
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return release{dist: dist, key: key, version: meta.Version, tag: meta.Tag, root: root}
}

// hostArchive is the name of this machine's archive, which install.sh
// picks.
func (r release) hostArchive(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skipf("install.sh installs on Linux and macOS, not %s", runtime.GOOS)
	}
	return fmt.Sprintf("loom_%s_%s_%s.tar.gz", r.version, runtime.GOOS, runtime.GOARCH)
}

// checksums is checksums.txt: archive name to SHA-256.
func (r release) checksums(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("checksums.txt: %q is no checksum line", line)
		}
		sums[name] = sum
	}
	return sums
}

// archivedLoom is the loom in the archive name.
func (r release) archivedLoom(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(r.dist, name))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s holds no loom: %v", name, err)
		}
		if h.Name == "loom" {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// serve serves install.sh where README.md's line fetches it from
// (/loomhq/loom/main/install.sh) and the directory release under
// /release/.
func (r release) serve(t *testing.T, release string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/loomhq/loom/main/install.sh", func(w http.ResponseWriter, req *http.Request) {
		http.ServeFile(w, req, filepath.Join(r.root, "install.sh"))
	})
	mux.Handle("/release/", http.StripPrefix("/release/", http.FileServer(http.Dir(release))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

type result struct {
	stdout, stderr string
	err            error
}

// sh runs a shell line with only the environment given (and PATH), as a
// user's fresh shell would.
func sh(t *testing.T, line string, env ...string) result {
	t.Helper()
	return shTimeout(t, 2*time.Minute, line, env...)
}

func needDownloader(t *testing.T) {
	t.Helper()
	for _, c := range []string{"curl", "wget"} {
		if _, err := exec.LookPath(c); err == nil {
			return
		}
	}
	t.Skip("neither curl nor wget is installed: install.sh cannot download")
}

// TestReleaseKey: the key install.sh trusts is the one whose
// fingerprint README.md and docs/release.md show.
func TestReleaseKey(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	root := filepath.Join("..", "..", "..")
	script, err := os.ReadFile(filepath.Join(root, "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^release_key='(ssh-ed25519 [A-Za-z0-9+/=]+)'$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("install.sh holds no release_key='ssh-ed25519 …'")
	}
	pub := filepath.Join(t.TempDir(), "release.pub")
	if err := os.WriteFile(pub, append(m[1], '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ssh-keygen", "-l", "-E", "sha256", "-f", pub).Output()
	if err != nil {
		t.Fatalf("ssh-keygen -l: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 || !strings.HasPrefix(fields[1], "SHA256:") {
		t.Fatalf("ssh-keygen -l: %q", out)
	}
	fp := fields[1]
	for _, f := range []string{"README.md", "docs/release.md", "install.sh"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(fp)) {
			t.Errorf("%s does not show the release key's fingerprint %s", f, fp)
		}
	}
}

// TestInstallFromReadme runs README.md's one line, its host replaced by
// a local server's, against the snapshot.
func TestInstallFromReadme(t *testing.T) {
	r := setup(t)
	archive := r.hostArchive(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: README.md's line uses it")
	}
	srv := r.serve(t, r.dist)
	line := readmeLine(t, r.root, "curl -fsSL ")
	const host = "https://raw.githubusercontent.com"
	if !strings.Contains(line, host+"/loomhq/loom/main/install.sh | sh") {
		t.Fatalf("README.md's install line fetches no install.sh from %s: %s", host, line)
	}
	dir := filepath.Join(t.TempDir(), "bin")
	res := sh(t, strings.Replace(line, host, srv.URL, 1),
		"LOOM_INSTALL_BASE="+srv.URL+"/release", "LOOM_INSTALL_DIR="+dir, "LOOM_INSTALL_KEY="+r.key)
	if res.err != nil {
		t.Fatalf("%s: %v\n%s%s", line, res.err, res.stdout, res.stderr)
	}
	r.checkInstalled(t, dir, archive, res)
}

// TestInstallFromDirectory installs from a directory, twice: the second
// replaces the first.
func TestInstallFromDirectory(t *testing.T) {
	r := setup(t)
	archive := r.hostArchive(t)
	dir := filepath.Join(t.TempDir(), "bin")
	for range 2 {
		res := sh(t, "sh "+filepath.Join(r.root, "install.sh"),
			"LOOM_INSTALL_BASE="+r.dist, "LOOM_INSTALL_DIR="+dir, "LOOM_INSTALL_KEY="+r.key)
		if res.err != nil {
			t.Fatalf("install.sh: %v\n%s%s", res.err, res.stdout, res.stderr)
		}
		r.checkInstalled(t, dir, archive, res)
	}
}

func (r release) checkInstalled(t *testing.T, dir, archive string, res result) {
	t.Helper()
	loom := filepath.Join(dir, "loom")
	want := fmt.Sprintf("loom %s installed in %s (checksum and signature verified)\n", r.version, loom)
	if !strings.HasPrefix(res.stdout, want) {
		t.Errorf("install.sh said %q, want it to start %q", res.stdout, want)
	}
	if !strings.Contains(res.stdout, dir+" is not on your PATH") {
		t.Errorf("install.sh did not say %s is not on PATH: %q", dir, res.stdout)
	}
	if res.stderr != "" {
		t.Errorf("install.sh wrote to stderr: %q", res.stderr)
	}
	got, err := os.ReadFile(loom)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, r.archivedLoom(t, archive)) {
		t.Errorf("%s is not the loom of %s", loom, archive)
	}
	fi, err := os.Stat(loom)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("%s: mode %v, %v; want 0755", loom, fi.Mode(), err)
	}
	out, err := exec.Command(loom, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "loom v"+r.version+" (") || !strings.Contains(string(out), ", commit ") {
		t.Errorf("%s version: %q, %v", loom, out, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".loom*")); len(left) > 0 {
		t.Errorf("install.sh left %v", left)
	}
}

// TestInstallRefuses: whatever does not verify stops install.sh with one
// line and a non-zero exit, and installs nothing.
func TestInstallRefuses(t *testing.T) {
	r := setup(t)
	archive := r.hostArchive(t)
	needDownloader(t)
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	tamper := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, archive)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x01
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:])
	}
	cases := []struct {
		name   string
		change func(t *testing.T, dir string)
		key    bool // LOOM_INSTALL_KEY names the snapshot's key
		want   string
	}{
		{
			name:   "tampered archive",
			change: func(t *testing.T, dir string) { tamper(t, dir) },
			key:    true,
			want:   archive + " does not match the release's checksum",
		},
		{
			name: "checksums.txt changed after signing",
			change: func(t *testing.T, dir string) {
				sum := tamper(t, dir)
				p := filepath.Join(dir, "checksums.txt")
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				re := regexp.MustCompile(`(?m)^[0-9a-f]{64}(  ` + regexp.QuoteMeta(archive) + `)$`)
				if !re.Match(b) {
					t.Fatalf("checksums.txt has no line for %s", archive)
				}
				if err := os.WriteFile(p, re.ReplaceAll(b, []byte(sum+"$1")), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			key:  true,
			want: "is not signed by the release key: nothing installed",
		},
		{
			name: "signed by another key",
			change: func(t *testing.T, dir string) {
				other := filepath.Join(t.TempDir(), "other")
				run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other)
				if err := os.Remove(filepath.Join(dir, "checksums.txt.sig")); err != nil {
					t.Fatal(err)
				}
				run(t, "ssh-keygen", "-q", "-Y", "sign", "-n", "file", "-f", other, filepath.Join(dir, "checksums.txt"))
			},
			key:  true,
			want: "is not signed by the release key: nothing installed",
		},
		{
			// Without LOOM_INSTALL_KEY, install.sh trusts the release
			// key alone, which never signs a snapshot.
			name:   "the release key, not the snapshot's",
			change: func(*testing.T, string) {},
			want:   "is not signed by the release key: nothing installed",
		},
		{
			name: "no signature",
			change: func(t *testing.T, dir string) {
				if err := os.Remove(filepath.Join(dir, "checksums.txt.sig")); err != nil {
					t.Fatal(err)
				}
			},
			key:  true,
			want: "cannot download ",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rel := t.TempDir()
			for _, f := range []string{"checksums.txt", "checksums.txt.sig", archive} {
				copyFile(t, filepath.Join(r.dist, f), filepath.Join(rel, f))
			}
			// Unchanged, the copy installs: what refuses is the change.
			dir := filepath.Join(t.TempDir(), "bin")
			env := []string{"LOOM_INSTALL_BASE=" + rel, "LOOM_INSTALL_DIR=" + dir, "LOOM_INSTALL_KEY=" + r.key}
			if res := sh(t, "sh "+filepath.Join(r.root, "install.sh"), env...); res.err != nil {
				t.Fatalf("the unchanged copy does not install: %v\n%s", res.err, res.stderr)
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}

			c.change(t, rel)
			srv := r.serve(t, rel)
			env = []string{"LOOM_INSTALL_BASE=" + srv.URL + "/release", "LOOM_INSTALL_DIR=" + dir}
			if c.key {
				env = append(env, "LOOM_INSTALL_KEY="+r.key)
			}
			res := sh(t, "sh "+filepath.Join(r.root, "install.sh"), env...)
			if res.err == nil {
				t.Fatalf("install.sh installed: %s", res.stdout)
			}
			if ee, ok := res.err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Errorf("install.sh: %v, want exit status 1", res.err)
			}
			lines := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "loom install: ") || !strings.Contains(lines[0], c.want) {
				t.Errorf("install.sh said %q, want one line 'loom install: …%s…'", res.stderr, c.want)
			}
			if res.stdout != "" {
				t.Errorf("install.sh wrote %q to stdout", res.stdout)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("install.sh made %s (%v)", dir, err)
			}
		})
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFormula: the Homebrew formula parses, as Ruby where Ruby is
// installed and by its structure always, and names each of the
// release's Linux and macOS archives with its checksum.
func TestFormula(t *testing.T) {
	r := setup(t)
	path := filepath.Join(r.dist, "homebrew", "Formula", "loom.rb")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if ruby, err := exec.LookPath("ruby"); err == nil {
		out, err := exec.Command(ruby, "-c", path).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "Syntax OK" {
			t.Errorf("ruby -c %s: %v\n%s", path, err, out)
		}
		t.Logf("ruby -c: %s", bytes.TrimSpace(out))
	} else {
		t.Log("no ruby here: the formula's structure is checked, not its syntax as Ruby")
	}

	// Every block opened is closed, none before it opens.
	opener := regexp.MustCompile(`^\s*(class|def|if|unless|case|module)\b|\bdo(\s*\|[^|]*\|)?\s*$`)
	depth := 0
	var lines []string
	for n, line := range strings.Split(string(b), "\n") {
		code := strings.TrimSpace(line)
		if strings.HasPrefix(code, "#") {
			continue
		}
		lines = append(lines, code)
		switch {
		case opener.MatchString(line):
			depth++
		case code == "end":
			depth--
			if depth < 0 {
				t.Fatalf("%s:%d: an end with no block open", path, n+1)
			}
		}
	}
	if depth != 0 {
		t.Errorf("%s: %d blocks left open", path, depth)
	}
	for _, want := range []string{
		"class Loom < Formula",
		`version "` + r.version + `"`,
		`homepage "https://github.com/loomhq/loom"`,
		`license "MIT"`,
		`bin.install "loom"`,
		`assert_match "loom v#{version}", shell_output("#{bin}/loom version")`,
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("%s has no line %q", path, want)
		}
	}

	// Each url is an archive of the release, followed by its checksum.
	sums := r.checksums(t)
	url := regexp.MustCompile(`^url "https://github.com/loomhq/loom/releases/download/` + regexp.QuoteMeta(r.tag) + `/([^"/]+)"$`)
	sha := regexp.MustCompile(`^sha256 "([0-9a-f]{64})"$`)
	var named []string
	for i, line := range lines {
		if !strings.HasPrefix(line, "url ") {
			continue
		}
		m := url.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("%s: %q is no archive of the release", path, line)
			continue
		}
		if i+1 >= len(lines) || sha.FindStringSubmatch(lines[i+1]) == nil || sha.FindStringSubmatch(lines[i+1])[1] != sums[m[1]] {
			t.Errorf("%s: %s is not followed by its checksum %s", path, m[1], sums[m[1]])
		}
		named = append(named, m[1])
	}
	var want []string
	for name := range sums {
		if strings.HasSuffix(name, ".tar.gz") && !strings.Contains(name, "_windows_") {
			want = append(want, name)
		}
	}
	slices.Sort(named)
	slices.Sort(want)
	if !slices.Equal(named, want) {
		t.Errorf("%s names %v, want the Linux and macOS archives %v", path, named, want)
	}
}

// TestSBOM: each archive has a CycloneDX SBOM, in checksums.txt, that
// names loom at the release's version and lists its modules.
func TestSBOM(t *testing.T) {
	r := setup(t)
	sums := r.checksums(t)
	n := 0
	for name := range sums {
		base, ok := strings.CutSuffix(name, ".tar.gz")
		if !ok {
			base, ok = strings.CutSuffix(name, ".zip")
		}
		if !ok {
			continue
		}
		n++
		doc := base + ".sbom.json"
		if sums[doc] == "" {
			t.Errorf("checksums.txt has %s but not its SBOM %s", name, doc)
			continue
		}
		b, err := os.ReadFile(filepath.Join(r.dist, doc))
		if err != nil {
			t.Fatal(err)
		}
		var bom struct {
			BOMFormat string `json:"bomFormat"`
			Metadata  struct {
				Component struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"component"`
			} `json:"metadata"`
			Components []struct {
				PURL string `json:"purl"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &bom); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Version != "v"+r.version ||
			!strings.HasSuffix(bom.Metadata.Component.Name, "github.com/loomhq/loom") {
			t.Errorf("%s: %s of %s %s, want CycloneDX of github.com/loomhq/loom v%s", doc,
				bom.BOMFormat, bom.Metadata.Component.Name, bom.Metadata.Component.Version, r.version)
		}
		var purls []string
		for _, c := range bom.Components {
			purls = append(purls, c.PURL)
		}
		for _, mod := range []string{"pkg:golang/modernc.org/sqlite@", "pkg:golang/github.com/jackc/pgx/v5@"} {
			if !slices.ContainsFunc(purls, func(p string) bool { return strings.HasPrefix(p, mod) }) {
				t.Errorf("%s lists no %s among %d components", doc, mod, len(purls))
			}
		}
	}
	if n == 0 {
		t.Fatal("checksums.txt lists no archive")
	}
}

// TestImage: the image of `loom serve` lists loom in its layer, the same
// loom as the archive's; it is set to start the hub as README.md's run
// line expects; and its loom runs, in docker or podman where one runs,
// else from the layer.
func TestImage(t *testing.T) {
	r := setup(t)
	if runtime.GOOS != "linux" {
		t.Skipf("the image holds Linux binaries; this is %s", runtime.GOOS)
	}
	tarPath := filepath.Join(r.dist, "loom_"+r.version+"_image.tar")
	blobs := readTar(t, tarPath)

	var top struct {
		Manifests []struct {
			MediaType   string            `json:"mediaType"`
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	unmarshal(t, blobs["index.json"], &top)
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Fatalf("index.json: %+v, want one image index", top.Manifests)
	}
	name := top.Manifests[0].Annotations["io.containerd.image.name"]
	if name != "ghcr.io/loomhq/loom:"+r.version {
		t.Errorf("the image is named %q", name)
	}
	var idx struct {
		Manifests []struct {
			Digest   string `json:"digest"`
			Platform struct {
				OS           string `json:"os"`
				Architecture string `json:"architecture"`
			} `json:"platform"`
		} `json:"manifests"`
	}
	unmarshal(t, blob(t, blobs, top.Manifests[0].Digest), &idx)
	var manifest struct {
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	found := false
	for _, m := range idx.Manifests {
		if m.Platform.OS == "linux" && m.Platform.Architecture == runtime.GOARCH {
			unmarshal(t, blob(t, blobs, m.Digest), &manifest)
			found = true
		}
	}
	if !found || len(manifest.Layers) != 1 {
		t.Fatalf("the image index has no linux/%s image of one layer: %+v", runtime.GOARCH, idx.Manifests)
	}

	// The layer lists loom, executable, and the hub's home, the user's.
	zr, err := gzip.NewReader(bytes.NewReader(blob(t, blobs, manifest.Layers[0].Digest)))
	if err != nil {
		t.Fatal(err)
	}
	layer := map[string]*tar.Header{}
	var loom []byte
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		layer[h.Name] = h
		if h.Name == "usr/local/bin/loom" {
			if loom, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if h := layer["usr/local/bin/loom"]; h == nil || h.Mode != 0o755 || h.Typeflag != tar.TypeReg {
		t.Fatalf("the layer lists no executable usr/local/bin/loom: %v", layer)
	}
	if h := layer["data/"]; h == nil || h.Typeflag != tar.TypeDir || h.Uid != 65532 {
		t.Errorf("the layer has no data/ of user 65532: %+v", h)
	}
	if !bytes.Equal(loom, r.archivedLoom(t, fmt.Sprintf("loom_%s_linux_%s.tar.gz", r.version, runtime.GOARCH))) {
		t.Error("the image's loom is not the archive's")
	}

	var cfg struct {
		Config struct {
			Entrypoint   []string            `json:"Entrypoint"`
			Cmd          []string            `json:"Cmd"`
			Env          []string            `json:"Env"`
			User         string              `json:"User"`
			ExposedPorts map[string]struct{} `json:"ExposedPorts"`
			Volumes      map[string]struct{} `json:"Volumes"`
			Labels       map[string]string   `json:"Labels"`
		} `json:"config"`
	}
	unmarshal(t, blob(t, blobs, manifest.Config.Digest), &cfg)
	c := cfg.Config
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/loom"}) || !slices.Equal(c.Cmd, []string{"serve", "--addr", "0.0.0.0:7878"}) ||
		!slices.Contains(c.Env, "LOOM_HOME=/data") || c.User != "65532:65532" || c.Labels["org.opencontainers.image.version"] != r.version {
		t.Errorf("the image's configuration: %+v", c)
	}
	// README.md's run line publishes the port the hub listens on and
	// keeps its home in a volume.
	runLine := readmeLine(t, r.root, "docker run -d ")
	if _, ok := c.ExposedPorts["7878/tcp"]; !ok || !strings.Contains(runLine, " -p 7878:7878 ") {
		t.Errorf("port 7878: exposed %v; README.md: %s", c.ExposedPorts, runLine)
	}
	if _, ok := c.Volumes["/data"]; !ok || !regexp.MustCompile(` -v [a-z-]+:/data `).MatchString(runLine) {
		t.Errorf("volume /data: %v; README.md: %s", c.Volumes, runLine)
	}
	if !strings.HasSuffix(runLine, " ghcr.io/loomhq/loom:latest") {
		t.Errorf("README.md's run line runs no ghcr.io/loomhq/loom:latest: %s", runLine)
	}

	if e, ok := findEngine(t); ok {
		r.runImage(t, e, tarPath, name, runLine)
		return
	}
	t.Log("no Docker daemon answers here and podman is not installed: README.md's run line is not run; the image's loom is run from its layer, with its environment and command")
	dir := t.TempDir()
	bin := filepath.Join(dir, "loom")
	if err := os.WriteFile(bin, loom, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "data")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	for _, e := range c.Env {
		if strings.HasPrefix(e, "LOOM_HOME=") {
			e = "LOOM_HOME=" + home
		}
		env = append(env, e)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "loom v"+r.version+" (") {
		t.Errorf("the image's loom version: %v\n%s", err, out)
	}
	// Its command starts the hub in an empty home, as a fresh volume is.
	args := slices.Clone(c.Cmd)
	args[len(args)-1] = "127.0.0.1:0"
	serveFirstLine(t, bin, args, env, home)
}

// serveFirstLine starts loom serve and waits for the address it prints.
func serveFirstLine(t *testing.T, bin string, args, env []string, home string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Dir = home
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "loom serve: http://127.0.0.1:") || !strings.Contains(line, "/?token=") {
		t.Fatalf("loom %v in the image's environment printed %q (%v); stderr:\n%s", args, line, err, stderr.String())
	}
}

func readTar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// blob is the layout's blob of digest, checked against it.
func blob(t *testing.T, blobs map[string][]byte, digest string) []byte {
	t.Helper()
	hexsum, ok := strings.CutPrefix(digest, "sha256:")
	b, there := blobs["blobs/sha256/"+hexsum]
	if !ok || !there {
		t.Fatalf("the image layout has no blob %s", digest)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexsum {
		t.Fatalf("blob %s does not match its digest", digest)
	}
	return b
}

func unmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// TestArchiveFromReadme runs README.md's archive line (its example
// archive's name replaced by this machine's) in a directory holding the
// release's checksums.txt and archive: it checks the archive and
// unpacks a loom that runs. With the archive's bytes altered the same
// line fails and unpacks nothing.
func TestArchiveFromReadme(t *testing.T) {
	r := setup(t)
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("sha256sum is not installed: README.md's archive line uses it")
	}
	line := readmeLine(t, r.root, "sha256sum --ignore-missing -c checksums.txt")
	example := regexp.MustCompile(`loom_[0-9.]+_linux_amd64\.tar\.gz`)
	if !example.MatchString(line) {
		t.Fatalf("README.md's archive line names no archive: %s", line)
	}
	line = example.ReplaceAllLiteralString(line, r.hostArchive(t))
	for _, tampered := range []bool{false, true} {
		dir := t.TempDir()
		for _, name := range []string{"checksums.txt", r.hostArchive(t)} {
			b, err := os.ReadFile(filepath.Join(r.dist, name))
			if err != nil {
				t.Fatal(err)
			}
			if tampered && name != "checksums.txt" {
				b[len(b)/2] ^= 1
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		_, statErr := os.Stat(filepath.Join(dir, "loom"))
		if tampered {
			if err == nil || statErr == nil {
				t.Fatalf("README.md's archive line took an altered archive (%v):\n%s", err, out)
			}
			continue
		}
		if err != nil {
			t.Fatalf("README.md's archive line: %v\n%s", err, out)
		}
		v, err := exec.Command(filepath.Join(dir, "loom"), "version").CombinedOutput()
		if err != nil || !strings.Contains(string(v), r.version) {
			t.Fatalf("the unpacked loom version: %v\n%s", err, v)
		}
	}
}
