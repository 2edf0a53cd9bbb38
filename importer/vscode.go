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
// platform's place (AppConfigDir): %APPDATA%\<product>\User on
// Windows, ~/Library/Application Support/<product>/User on macOS, and
// $XDG_CONFIG_HOME/<product>/User (~/.config) elsewhere.
func VSCodeUserDirs(env func(string) string, home string, products ...string) []string {
	get := Getenv(env)
	var out []string
	if p := get("VSCODE_PORTABLE"); filepath.IsAbs(p) {
		out = append(out, filepath.Join(p, "user-data", "User"))
	}
	base := AppConfigDir(get, home)
	if base == "" {
		return out
	}
	for _, p := range products {
		out = append(out, filepath.Join(base, p, "User"))
	}
	return out
}

// AppConfigDir is the platform's directory of applications' settings,
// where the VS Code family keeps its user data: %APPDATA% (else
// ~/AppData/Roaming) on Windows, ~/Library/Application Support on macOS,
// and $XDG_CONFIG_HOME when it is absolute (else ~/.config) elsewhere;
// empty when none is known. env may be nil (no variable set).
func AppConfigDir(env func(string) string, home string) string {
	get := Getenv(env)
	join := func(rel ...string) string {
		if home == "" {
			return ""
		}
		return filepath.Join(append([]string{home}, rel...)...)
	}
	switch runtime.GOOS {
	case "windows":
		if d := get("APPDATA"); d != "" {
			return d
		}
		return join("AppData", "Roaming")
	case "darwin":
		return join("Library", "Application Support")
	}
	if d := get("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return d
	}
	return join(".config")
}
