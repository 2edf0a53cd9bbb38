// Package shell reads the shell commands agents ran: the command line
// of a shell tool's call (Command) and a command's words (Words,
// WordsNoStderr), which the file edits a command tells of (package
// fileedit) and the substitutions blame reads (package blame) are read
// from.
package shell

import (
	"encoding/json"
	"strings"

	"github.com/loomhq/loom"
)

// Command is the command line a tool call ran, when the call is one of
// a shell tool: Claude Code's Bash, Codex's shell, exec_command and
// shell_command (and local_shell), Gemini CLI's run_shell_command,
// opencode's bash, droid's Execute, and Cline's run_commands (its
// commands one a line).
func Command(p loom.Part) (string, bool) {
	var in struct {
		Command  any      `json:"command"`
		Cmd      string   `json:"cmd"`
		Commands []string `json:"commands"`
		Action   *struct {
			Command []string `json:"command"`
		} `json:"action"`
	}
	switch p.Name {
	case "Bash", "bash", "shell", "exec_command", "shell_command", "local_shell", "local_shell_call", "run_shell_command", "Execute", "run_commands":
	default:
		return "", false
	}
	if json.Unmarshal(p.Input, &in) != nil {
		return "", false
	}
	switch c := in.Command.(type) {
	case string:
		return c, c != ""
	case []any:
		var args []string
		for _, a := range c {
			s, ok := a.(string)
			if !ok {
				return "", false
			}
			args = append(args, s)
		}
		return argvLine(args)
	}
	switch {
	case in.Cmd != "":
		return in.Cmd, true
	case len(in.Commands) > 0:
		line := strings.Join(in.Commands, "\n")
		return line, strings.TrimSpace(line) != ""
	case in.Action != nil:
		return argvLine(in.Action.Command)
	}
	return "", false
}

// argvLine is the command line of an argument vector: the script of a
// `bash -lc SCRIPT` (how Codex runs everything), else the words joined.
func argvLine(args []string) (string, bool) {
	if len(args) == 3 && (args[0] == "bash" || args[0] == "sh" || args[0] == "zsh" || strings.HasSuffix(args[0], "/bash")) && (args[1] == "-lc" || args[1] == "-c") {
		return args[2], true
	}
	line := strings.Join(args, " ")
	return line, line != ""
}

// Words splits a command into words at the spaces and tabs outside
// quotes, the quotes removed. A quote (' or ") runs to the next of the
// same; nothing else is read: a backslash, a $ and a redirect are
// characters of their word.
func Words(s string) []string { return split(s, false) }

// WordsNoStderr is Words without the redirects of the error stream
// (2>file, 2>&1, the 2> of 2> file): they name no file of the
// command's. A redirect's operator is a word of its own unless written
// against its file.
func WordsNoStderr(s string) []string { return split(s, true) }

func split(s string, noStderr bool) []string {
	var out []string
	var b strings.Builder
	var q byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			q, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		case noStderr && c == '2' && !in && i+1 < len(s) && s[i+1] == '>':
			// 2> and 2>&1: the error stream, no file of the command's.
			j := i + 2
			for j < len(s) && s[j] != ' ' {
				j++
			}
			i = j
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}
