package agents

import (
	"context"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// The list of agents loom reads (`loom session import --from list`,
// docs/import.md) is kept honest by these tests: every package of an
// agent's format is wired in, every agent wired has its row in
// docs/import.md with the evidence its reader was checked against, and
// each kind of content a row claims is held by a file its tests read.

const module = "github.com/loomhq/loom/importer/"

// formatPackages are the directories under importer/ whose package
// registers a format (importer.Register in a file that is not a test).
func formatPackages(t *testing.T) []string {
	t.Helper()
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join("..", d.Name(), "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), "importer.Register(") {
				out = append(out, d.Name())
				break
			}
		}
	}
	return out
}

// A package that registers a format and is not imported by this package
// is an agent loom has a reader for and does not list.
func TestEveryFormatPackageIsWired(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "agents.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	wired := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		wired[strings.TrimPrefix(p, module)] = true
	}
	pkgs := formatPackages(t)
	if len(pkgs) < 30 {
		t.Fatalf("found %d format packages under importer/: %v", len(pkgs), pkgs)
	}
	for _, p := range pkgs {
		if !wired[p] {
			t.Errorf("importer/%s registers a format but importer/agents does not import it: loom does not list it", p)
		}
	}
	// And every registered format comes from one of them.
	for _, fm := range Formats() {
		pkg := filepath.Base(pkgDir(fm))
		if _, ok := fm.(importer.Variant); ok {
			pkg = "variants"
		}
		if !slices.Contains(pkgs, pkg) {
			t.Errorf("%s is registered from %s, which this test does not see", fm.Tool(), pkg)
		}
	}
}

// row is an agent's row in docs/import.md's "Every agent at a glance".
type row struct {
	tools    []string
	evidence string
	imported string
}

var backticked = regexp.MustCompile("`([a-z0-9-]+)`")

func glance(t *testing.T) []row {
	t.Helper()
	data := importertest.ReadBytes(t, filepath.Join("..", "..", "docs", "import.md"))
	_, rest, ok := strings.Cut(string(data), "## Every agent at a glance")
	if !ok {
		t.Fatal("docs/import.md has no \"Every agent at a glance\"")
	}
	rest, _, _ = strings.Cut(rest, "\n## ")
	var out []row
	for _, line := range strings.Split(rest, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) < 5 || strings.HasPrefix(line, "| agent") {
			continue
		}
		r := row{evidence: cells[1], imported: cells[3]}
		name, _, _ := strings.Cut(cells[0], ") ")
		for _, m := range backticked.FindAllStringSubmatch(name, -1) {
			r.tools = append(r.tools, m[1])
		}
		out = append(out, r)
	}
	return out
}

// commit is a source commit named in full.
var commit = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// unsourced are the agents whose rows name neither the real program run
// nor a source commit, each with why: no program here and no source of
// theirs to name (closed programs, a service's exports); their files
// are built to the form public readers describe. No agent may join
// them.
var unsourced = map[string]string{
	"chatgpt":     "a service's export, no program",
	"claude-ai":   "a service's export, no program",
	"antigravity": "closed IDE",
	"windsurf":    "closed editor; its users' downloaded trajectories",
	"amp":         "its CLI needs Amp's service",
	"kiro":        "kiro-cli needs AWS's service",
	"muse":        "not on npm, no public source found",
	"junie":       "its npm package downloads the program",
}

// Every agent wired in has its row, which names the evidence: the real
// program (and its version) or the source and commit its files were
// built to; and every row is an agent wired in.
func TestEveryAgentHasItsRow(t *testing.T) {
	rows := glance(t)
	byTool := map[string]row{}
	for _, r := range rows {
		for _, tool := range r.tools {
			byTool[tool] = r
		}
	}
	registered := map[string]bool{}
	for _, fm := range Formats() {
		registered[fm.Tool()] = true
		r, ok := byTool[fm.Tool()]
		if !ok {
			t.Errorf("%s is wired in but has no row in docs/import.md's table", fm.Tool())
			continue
		}
		real := strings.Contains(r.evidence, "real program")
		_, exempt := unsourced[fm.Tool()]
		sourced := real || commit.MatchString(r.evidence)
		if !sourced && !exempt {
			t.Errorf("%s's row names neither the real program nor a source commit: %q", fm.Tool(), r.evidence)
		}
		if sourced && exempt {
			t.Errorf("%s's row names its evidence now: take it out of unsourced", fm.Tool())
		}
	}
	for tool := range byTool {
		if !registered[tool] {
			t.Errorf("docs/import.md has a row for %s, which loom does not read", tool)
		}
	}
	t.Logf("%d agents, %d rows", len(registered), len(rows))
	// And the count the README and docs/import.md give is this one.
	for _, doc := range []string{filepath.Join("..", "..", "README.md"), filepath.Join("..", "..", "docs", "import.md")} {
		data := importertest.ReadBytes(t, doc)
		if want := strconv.Itoa(len(registered)) + " agents"; !strings.Contains(strings.Join(strings.Fields(string(data)), " "), want) {
			t.Errorf("%s does not say %q", doc, want)
		}
	}
}

// builtInTests are the formats some of whose files their tests build
// (a database written by the test to the agent's schema) rather than
// keep in testdata/, each with the test that does: what a row claims is
// held by testdata/ or by that test's files.
var builtInTests = map[string]string{
	"amazon-q": "TestRead", "kiro-cli": "TestRead", "crush": "TestReadDB", "forge": "TestRead", "zed": "TestReadDB", "goose": "TestReadDB",
	"cursor": "TestReadEditor", "warp": "TestReadTasks", "openclaw": "TestReadDB", "hermes": "TestReadState",
	"shelley": "TestRead", "devin": "TestRead",
}

// Each kind of content a row claims (T text, R reasoning, X tool calls,
// S sub-agents, U usage, C compaction summaries) is held by the files
// in the reader's testdata/: read with the reader, they hold it.
func TestClaimsAreBackedByFiles(t *testing.T) {
	rows := glance(t)
	byTool := map[string]row{}
	for _, r := range rows {
		for _, tool := range r.tools {
			byTool[tool] = r
		}
	}
	for _, fm := range Formats() {
		r, ok := byTool[fm.Tool()]
		if !ok {
			continue
		}
		claims := claimed(r.imported)
		dir := pkgDir(fm)
		if name, ok := builtInTests[fm.Tool()]; ok {
			if !testNamed(dir, name) {
				t.Errorf("%s: its files are said to be built by %s, which %s lacks", fm.Tool(), name, dir)
			}
			continue
		}
		held := holds(t, fm, filepath.Join(dir, "testdata"))
		if held == "" {
			t.Errorf("%s: no file of %s/testdata is read as a session", fm.Tool(), dir)
		}
		for _, c := range claims {
			if !strings.ContainsRune(held, c) {
				t.Errorf("%s claims %c, which no file of %s/testdata holds (they hold %q)", fm.Tool(), c, dir, held)
			}
		}
	}
}

// claimed is the letters of an "imported" cell.
func claimed(cell string) []rune {
	var out []rune
	for _, f := range strings.Fields(cell) {
		if len(f) == 1 && strings.Contains("TRXSUC", f) {
			out = append(out, rune(f[0]))
		}
	}
	return out
}

// holds reads every bundle under root with f and says what its sessions
// hold, as the letters of the table.
func holds(t *testing.T, f importer.Format, root string) string {
	t.Helper()
	ctx := context.Background()
	bs, _ := f.Bundles(ctx, root)
	// A reader whose files are named by the user (an export, a history)
	// or whose database has its own name is given each file as its root.
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			more, _ := f.Bundles(ctx, path)
			bs = append(bs, more...)
		}
		return nil
	})
	have := map[rune]bool{}
	for _, b := range bs {
		res, err := f.Read(ctx, b)
		if err != nil || res == nil {
			continue
		}
		for _, s := range res.Sessions {
			if s.Kind == loom.KindSubagent {
				have['S'] = true
			}
			for _, m := range s.Messages {
				if m.Usage.InputTokens+m.Usage.OutputTokens > 0 {
					have['U'] = true
				}
				if m.Role == loom.RoleSummary {
					have['C'] = true
				}
				for _, p := range m.Parts {
					switch p.Type {
					case loom.PartText:
						have['T'] = true
					case loom.PartReasoning:
						have['R'] = true
					case loom.PartTool:
						have['X'] = true
					case loom.PartAgent:
						have['S'] = true
					}
				}
			}
		}
	}
	var out []rune
	for _, c := range "TRXSUC" {
		if have[c] {
			out = append(out, c)
		}
	}
	return string(out)
}

func testNamed(dir, name string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), "func "+name+"(") {
			return true
		}
	}
	return false
}

// pkgDir is the directory of the package that registers f.
func pkgDir(f importer.Format) string {
	if v, ok := f.(importer.Variant); ok {
		// A variant reads its base's files: its claims are backed by
		// them (and importer/variants reads them in its places).
		return pkgDir(v.Of)
	}
	pkg := reflect.TypeOf(f).PkgPath()
	if pkg+"/" == module {
		// The exports' format is package importer's, registered from
		// the export's package (importer/chatgpt, importer/claudeai).
		return filepath.Join("..", strings.ReplaceAll(f.Tool(), "-", ""))
	}
	return filepath.Join("..", strings.TrimPrefix(pkg, module))
}
