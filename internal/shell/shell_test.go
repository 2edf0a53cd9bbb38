package shell

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/loomhq/loom"
)

// TestCommand: the shell calls of every tool are recognised, whatever
// shape their input has.
func TestCommand(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"Bash", `{"command":"ls -la"}`, "ls -la"},
		{"shell", `{"command":["bash","-lc","go test ./..."]}`, "go test ./..."},
		{"shell", `{"command":["git","status"]}`, "git status"},
		{"exec_command", `{"cmd":"make"}`, "make"},
		{"local_shell", `{"action":{"command":["ls"]}}`, "ls"},
		{"run_shell_command", `{"command":"npm test"}`, "npm test"},
		{"bash", `{"command":"pwd"}`, "pwd"},
		{"Grep", `{"command":"x"}`, ""},
	} {
		got, ok := Command(loom.Part{Name: c.name, Input: json.RawMessage(c.input)})
		if got != c.want || ok != (c.want != "") {
			t.Errorf("Command(%s %s) = %q, %v; want %q", c.name, c.input, got, ok, c.want)
		}
	}
}

// TestWords: the words of the commands blame reads substitutions from
// (sed -i, perl -pi) and of those file edits are read from (redirects,
// tee, cd, cp, here-documents' heads), as both read them before they
// shared this splitter. Quotes are removed; nothing else is read, so a
// backslash, $'…' and <<< stay characters of their words. The error
// stream's redirects are dropped by WordsNoStderr only.
func TestWords(t *testing.T) {
	for _, c := range []struct {
		cmd            string
		words, noError []string // noError: WordsNoStderr's, when not words
	}{
		{"sed -i 's/one/two/' z.txt", []string{"sed", "-i", "s/one/two/", "z.txt"}, nil},
		{`sed -i -e 's/\(limit\) = [0-9]*/\1 = 50/' a.py`, []string{"sed", "-i", "-e", `s/\(limit\) = [0-9]*/\1 = 50/`, "a.py"}, nil},
		{`sed -i '' 's|/usr/bin|/opt/bin|' a.sh`, []string{"sed", "-i", "", "s|/usr/bin|/opt/bin|", "a.sh"}, nil},
		{`perl -pi -e "s/(\w+)_old/\$1_new/g" a.go`, []string{"perl", "-pi", "-e", `s/(\w+)_old/\$1_new/g`, "a.go"}, nil},
		{"sed\t-i  's/a;b/c/'\tf ", []string{"sed", "-i", "s/a;b/c/", "f"}, nil},
		{`echo "it's"' "quoted"'`, []string{"echo", `it's "quoted"`}, nil},
		{`a"b c"d`, []string{"ab cd"}, nil},
		{`echo 'open`, []string{"echo", "open"}, nil},
		{`cat > "my file.txt"`, []string{"cat", ">", "my file.txt"}, nil},
		{"tee -a f.txt >/dev/null", []string{"tee", "-a", "f.txt", ">/dev/null"}, nil},
		{"cd sub", []string{"cd", "sub"}, nil},
		{"cp a.go b.go", []string{"cp", "a.go", "b.go"}, nil},
		{"go run gen.go > gen_out.go 2>/dev/null", []string{"go", "run", "gen.go", ">", "gen_out.go", "2>/dev/null"}, []string{"go", "run", "gen.go", ">", "gen_out.go"}},
		{"make 2>&1 > log.txt", []string{"make", "2>&1", ">", "log.txt"}, []string{"make", ">", "log.txt"}},
		{"make 2> err.txt", []string{"make", "2>", "err.txt"}, []string{"make", "err.txt"}},
		{"echo x2>y", []string{"echo", "x2>y"}, nil},
		{`printf a\ b`, []string{"printf", `a\`, "b"}, nil},
		{`echo $'a\tb'`, []string{"echo", `$a\tb`}, nil},
		{"cat <<< 'here string'", []string{"cat", "<<<", "here string"}, nil},
		{"", nil, nil},
		{"   ", nil, nil},
	} {
		if got := Words(c.cmd); !slices.Equal(got, c.words) {
			t.Errorf("Words(%q) = %q, want %q", c.cmd, got, c.words)
		}
		want := c.noError
		if want == nil {
			want = c.words
		}
		if got := WordsNoStderr(c.cmd); !slices.Equal(got, want) {
			t.Errorf("WordsNoStderr(%q) = %q, want %q", c.cmd, got, want)
		}
	}
}
