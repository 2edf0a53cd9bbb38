package capture

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom/capture"
)

// What the service managers' commands print and take, and the crontab
// line where none runs.

// noUserManager says that systemctl --user failed, as it printed out,
// because no user service manager runs: no user bus to reach one (a
// container, a minimal VM, a login without a session), or no systemd
// at all (WSL without it).
func noUserManager(out string) bool {
	for _, s := range []string{"Failed to connect to bus", "Failed to connect to user scope bus", "not been booted with systemd", "$DBUS_SESSION_BUS_ADDRESS and $XDG_RUNTIME_DIR not defined"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// shellParts are the words a shell line that runs s is made of: its
// environment (NAME='value'), loom and its arguments, each quoted, and
// the redirection of its output to the service's log ("" without one).
func shellParts(s capture.Service) (env, run []string, log string) {
	for _, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, k+"="+shellQuote(v))
	}
	run = []string{shellQuote(s.Program)}
	for _, a := range s.Args {
		run = append(run, shellQuote(a))
	}
	if s.Log != "" {
		log = " >>" + shellQuote(s.Log) + " 2>&1"
	}
	return env, run, log
}

// cronLine is the crontab line that starts s at boot where no service
// manager does: its environment, the home included, set before loom,
// its output appended to the service's log. cron hands the line to
// /bin/sh, and takes a % for a new line unless it is escaped.
func cronLine(s capture.Service) string {
	env, run, log := shellParts(s)
	line := strings.Join(append(append([]string{"@reboot"}, env...), run...), " ") + log
	return strings.ReplaceAll(line, "%", `\%`)
}

// startLine is the shell command that starts s now, in the background,
// where no service manager does: s's environment and log as in the
// crontab line, detached from the terminal's hang-up by nohup where
// the machine has it, else by the shell's own trap (a minimal image
// may lack coreutils' nohup, never sh).
func startLine(s capture.Service, lookPath func(string) (string, error)) string {
	env, run, log := shellParts(s)
	if _, err := lookPath("nohup"); err == nil {
		return strings.Join(append(append(env, "nohup"), run...), " ") + log + " </dev/null &"
	}
	inner := `trap "" HUP; exec ` + strings.Join(run, " ") + log
	return strings.Join(append(env, "sh", "-c", shellQuote(inner)), " ") + " </dev/null &"
}

func firstLine(out string, err error) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return err.Error()
	}
	if i := strings.IndexByte(out, '\n'); i >= 0 {
		out = out[:i]
	}
	return out
}

// splitCommand splits one of the commands of serviceReport.Run into its
// words (a word in single quotes may hold spaces).
func splitCommand(line string) []string {
	var words []string
	var cur strings.Builder
	quoted, in := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' && quoted && strings.HasPrefix(line[i:], `'\''`):
			cur.WriteByte('\'')
			i += 3
		case c == '\'':
			quoted, in = !quoted, true
		case c == ' ' && !quoted:
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"$`\\*?[]#~&;|<>(){}") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// lingering says whether systemd starts the user's services at boot
// (loginctl enable-linger); nil when it cannot tell.
func lingering(opts *Options) *bool {
	user := opts.Getenv("USER")
	if user == "" {
		return nil
	}
	if _, err := os.Stat("/var/lib/systemd/linger"); err != nil {
		return nil
	}
	_, err := os.Stat(filepath.Join("/var/lib/systemd/linger", user))
	on := !errors.Is(err, fs.ErrNotExist)
	return &on
}
