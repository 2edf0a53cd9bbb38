// Package capture is loom's capture that runs by itself: the per-user
// service that follows every agent loom reads (a systemd user unit on
// Linux, a launchd agent on macOS), what it runs (Run: the agents'
// directories watched, everything imported again at each rescan, a
// heartbeat written all along), and the state it leaves for `loom
// capture status` and `loom doctor` to read (State). See
// docs/durability.md.
package capture

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// The service's names.
const (
	// UnitName is the systemd user unit's file name.
	UnitName = "loom-capture.service"
	// Label is the launchd agent's label, and its plist's file name
	// without ".plist".
	Label = "dev.loom.capture"
)

// Service is what the per-user service runs: loom, by its absolute
// path, with its arguments (capture run, and the global flags the
// service was installed with), in an environment that holds what this
// loom reads besides the home directory (LOOM_HOME, LOOM_DB, the agents'
// directory overrides), which a service manager does not pass on.
type Service struct {
	Program string
	Args    []string
	// Env are NAME=VALUE pairs.
	Env []string
	// Log is the file the service's output goes to where the service
	// manager keeps none of its own (launchd).
	Log string
}

// SystemdUnit is the service as a systemd user unit. It starts with the
// user's session manager (WantedBy=default.target; with `loginctl
// enable-linger` at boot, before any login), restarts whatever ended it
// (Restart=always, five seconds later, never giving up), and runs at a
// low priority: capture waits on files and must never slow the user's
// work.
func SystemdUnit(s Service) (string, error) {
	if strings.ContainsAny(s.Program, "\"'\\") {
		// systemd refuses a program whose name holds them, quoted or not.
		return "", fmt.Errorf("systemd cannot run a program whose path holds a quote or a backslash: %s; put loom elsewhere", s.Program)
	}
	var b strings.Builder
	b.WriteString("# Written by `loom capture install`; `loom capture uninstall` removes it.\n")
	b.WriteString("[Unit]\n")
	b.WriteString("Description=loom capture: imports every agent's sessions as they are written\n")
	b.WriteString("StartLimitIntervalSec=0\n\n")
	b.WriteString("[Service]\n")
	b.WriteString("Type=simple\n")
	// The program's path is taken as it is written (specifiers aside);
	// its arguments have their variables ($NAME) expanded.
	words := []string{systemdQuote(s.Program, false)}
	for _, w := range s.Args {
		words = append(words, systemdQuote(w, true))
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", strings.Join(words, " "))
	for _, kv := range sortedEnv(s.Env) {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(kv, false))
	}
	b.WriteString("Restart=always\n")
	b.WriteString("RestartSec=5\n")
	b.WriteString("Nice=10\n")
	b.WriteString("IOSchedulingClass=idle\n\n")
	b.WriteString("[Install]\n")
	b.WriteString("WantedBy=default.target\n")
	return b.String(), nil
}

// systemdQuote quotes w as one word of a unit file's command line (exec
// is true: $ is a variable there) or of an Environment= assignment, in
// double quotes where it needs them, with the specifiers' % doubled.
func systemdQuote(w string, exec bool) string {
	w = strings.ReplaceAll(w, "%", "%%")
	if exec {
		w = strings.ReplaceAll(w, "$", "$$")
	}
	if w != "" && !strings.ContainsAny(w, " \t\"'\\;\n") {
		return w
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(w) + `"`
}

// LaunchdPlist is the service as a launchd agent's property list: run
// at login (RunAtLoad) and again whenever it ends (KeepAlive), at a
// low priority, its output in s.Log.
func LaunchdPlist(s Service) []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString(`<plist version="1.0">` + "\n<dict>\n")
	key := func(k string) { fmt.Fprintf(&b, "\t<key>%s</key>\n", esc(k)) }
	str := func(indent, v string) { fmt.Fprintf(&b, "%s<string>%s</string>\n", indent, esc(v)) }
	key("Label")
	str("\t", Label)
	key("ProgramArguments")
	b.WriteString("\t<array>\n")
	for _, w := range append([]string{s.Program}, s.Args...) {
		str("\t\t", w)
	}
	b.WriteString("\t</array>\n")
	if len(s.Env) > 0 {
		key("EnvironmentVariables")
		b.WriteString("\t<dict>\n")
		for _, kv := range sortedEnv(s.Env) {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&b, "\t\t<key>%s</key>\n", esc(k))
			str("\t\t", v)
		}
		b.WriteString("\t</dict>\n")
	}
	key("RunAtLoad")
	b.WriteString("\t<true/>\n")
	key("KeepAlive")
	b.WriteString("\t<true/>\n")
	key("ThrottleInterval")
	b.WriteString("\t<integer>5</integer>\n")
	key("ProcessType")
	str("\t", "Background")
	key("LowPriorityIO")
	b.WriteString("\t<true/>\n")
	if s.Log != "" {
		key("StandardOutPath")
		str("\t", s.Log)
		key("StandardErrorPath")
		str("\t", s.Log)
	}
	b.WriteString("</dict>\n</plist>\n")
	return b.Bytes()
}

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

func sortedEnv(env []string) []string {
	out := slices.Clone(env)
	slices.Sort(out)
	return out
}

// UnitPath is where a systemd user unit goes: the user's
// $XDG_CONFIG_HOME/systemd/user (default ~/.config/systemd/user).
func UnitPath(getenv func(string) string, home string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "systemd", "user", UnitName)
}

// PlistPath is where a launchd agent of the user's goes.
func PlistPath(home string) string {
	return filepath.Join(home, "Library", "LaunchAgents", Label+".plist")
}
