package fileedit

import (
	"path"
	"strings"

	"github.com/loomhq/loom"
)

// formatters are the formatters and generators read by their command:
// whether one writes its files only when told (a flag of its own), and
// the files it writes when none is named (globs; ** any directories).
var formatters = map[string]struct {
	write    []string // one of these flags makes it write; none: always
	fallback []string // the files it writes when named none
}{
	"gofmt":        {write: []string{"-w"}},
	"goimports":    {write: []string{"-w"}},
	"gofumpt":      {write: []string{"-w"}},
	"prettier":     {write: []string{"--write", "-w"}},
	"black":        {fallback: []string{"**/*.py"}},
	"isort":        {fallback: []string{"**/*.py"}},
	"autopep8":     {write: []string{"-i", "--in-place"}},
	"yapf":         {write: []string{"-i", "--in-place"}},
	"rustfmt":      {},
	"clang-format": {write: []string{"-i"}},
	"eslint":       {write: []string{"--fix"}},
	"stylua":       {},
	"shfmt":        {write: []string{"-w"}},
	"rubocop":      {write: []string{"-a", "-A", "--autocorrect", "--autocorrect-all"}},
	"biome":        {write: []string{"--write", "--apply"}},
}

// subcommands are formatters and generators run as a tool's subcommand
// (go fmt, cargo fmt, mix format, mix ash.codegen, ruff format): the
// files they write when named none.
var subcommands = map[string][]string{
	"go fmt":                 {"**/*.go"},
	"cargo fmt":              {"**/*.rs"},
	"mix format":             {"**/*.ex", "**/*.exs", "**/*.heex"},
	"mix ash.codegen":        {"priv/**"},
	"mix ecto.gen.migration": {"priv/**"},
	"ruff format":            {"**/*.py"},
	"terraform fmt":          {"**/*.tf"},
	"dart format":            {"**/*.dart"},
	"deno fmt":               {"**/*"},
}

// launchers are the programs that run another by its name (npx
// prettier, uv run black, python3 -m black).
var launchers = map[string]bool{"npx": true, "bunx": true, "pnpx": true, "uvx": true, "exec": true, "run": true, "dlx": true, "pnpm": true, "yarn": true, "uv": true, "poetry": true, "pipx": true, "bundle": true, "-m": true, "python": true, "python3": true}

// formatted are the files a formatter or generator the command runs
// (its words f) rewrites, named as loom.EditShell with the command: what
// it wrote is not read, so blame credits the lines it changed to no one
// (unknown), but a change of spaces alone, which blame sees through,
// leaves them the agent's who wrote them. A directory named stands for
// the files under it (DIR/**).
func formatted(seg string, f []string) []Change {
	for len(f) > 1 && launchers[f[0]] {
		f = f[1:]
	}
	if len(f) == 0 || hasAny(f[1:], []string{"--check", "--diff", "--dry-run", "--list-different"}) {
		return nil
	}
	name := f[0][strings.LastIndexByte(f[0], '/')+1:]
	var files, fallback []string
	if len(f) > 1 {
		if fb, ok := subcommands[name+" "+f[1]]; ok {
			files, fallback = operands(f[2:]), fb
			if strings.Contains(f[1], "gen") {
				// A generator's operands name what it makes, not files.
				files = nil
			}
		}
	}
	if fallback == nil {
		spec, ok := formatters[name]
		if !ok {
			return nil
		}
		if len(spec.write) > 0 && !hasAny(f[1:], spec.write) {
			return nil
		}
		files, fallback = operands(f[1:]), spec.fallback
	}
	var out []Change
	for _, file := range files {
		if isDevice(file) || file == "|" {
			continue
		}
		switch {
		case file == "." || file == "./..." || strings.HasSuffix(file, "/..."):
			file = strings.TrimSuffix(strings.TrimSuffix(file, "..."), "/")
			if file == "" || file == "." {
				file = "**"
			} else {
				file += "/**"
			}
		case strings.HasSuffix(file, "/") || !strings.Contains(path.Base(file), ".") && !strings.ContainsAny(file, "*?["):
			file = strings.TrimSuffix(file, "/") + "/**"
		}
		out = append(out, Change{Op: loom.EditShell, Path: file, Command: seg})
	}
	if len(out) == 0 {
		for _, g := range fallback {
			out = append(out, Change{Op: loom.EditShell, Path: g, Command: seg})
		}
	}
	return out
}

// hasAny says whether words holds one of flags.
func hasAny(words, flags []string) bool {
	for _, w := range words {
		for _, fl := range flags {
			if w == fl {
				return true
			}
		}
	}
	return false
}
