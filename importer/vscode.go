package importer

import (
	"path/filepath"
	"runtime"
)

// VSCodeProducts are the editors built from VS Code whose user data
// directories hold the same storage: VS Code, its Insiders build and
// VSCodium.
var VSCodeProducts = []string{"Code", "Code - Insiders", "VSCodium"}

// VSCodeUserDirs are the User directories of the VS Code family's
// editors named by products (their globalStorage and workspaceStorage
// are below them): $VSCODE_PORTABLE/user-data/User when that variable
// names a portable install, and each product's directory in the
// platform's place: %APPDATA%\<product>\User on Windows,
// ~/Library/Application Support/<product>/User on macOS, and
// $XDG_CONFIG_HOME/<product>/User (~/.config) elsewhere.
func VSCodeUserDirs(env func(string) string, home string, products ...string) []string {
	get := func(k string) string {
		if env == nil {
			return ""
		}
		return env(k)
	}
	var out []string
	if p := get("VSCODE_PORTABLE"); filepath.IsAbs(p) {
		out = append(out, filepath.Join(p, "user-data", "User"))
	}
	var base string
	switch runtime.GOOS {
	case "windows":
		base = get("APPDATA")
		if base == "" && home != "" {
			base = filepath.Join(home, "AppData", "Roaming")
		}
	case "darwin":
		if home != "" {
			base = filepath.Join(home, "Library", "Application Support")
		}
	default:
		base = get("XDG_CONFIG_HOME")
		if !filepath.IsAbs(base) {
			base = ""
			if home != "" {
				base = filepath.Join(home, ".config")
			}
		}
	}
	if base == "" {
		return out
	}
	for _, p := range products {
		out = append(out, filepath.Join(base, p, "User"))
	}
	return out
}
