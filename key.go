package loom

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxKeyLen bounds a session key.
const MaxKeyLen = 256

// ValidKey checks a key of the form SURFACE:NAME: a surface of letters,
// digits, '-', '_' or '.', a colon, and a name, on one line of UTF-8
// without NUL bytes (text every engine can hold).
func ValidKey(key string) error {
	surface, name, ok := strings.Cut(key, ":")
	switch {
	case key == "":
		return Errorf(EINVALID, "key is required, e.g. telegram:12345")
	case len(key) > MaxKeyLen:
		return Errorf(EINVALID, "key is longer than %d bytes", MaxKeyLen)
	case !ok || surface == "" || name == "":
		return Errorf(EINVALID, "key %q must be SURFACE:NAME, e.g. telegram:12345", key)
	case strings.ContainsAny(key, "\r\n\t\x00"):
		return Errorf(EINVALID, "key must be one line")
	case !utf8.ValidString(key):
		return Errorf(EINVALID, "key %q is not UTF-8", key)
	}
	for _, c := range surface {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return Errorf(EINVALID, "surface %q may hold only letters, digits, '-', '_' and '.'", surface)
		}
	}
	return nil
}

// SurfaceCLI is the surface of the command line's sessions.
const SurfaceCLI = "cli"

// CLIKey is the key of a project's first command-line session,
// "cli:<project name>"; later ones add the creation time, see CLIKeyAt.
func CLIKey(project string) string { return SurfaceCLI + ":" + project }

// CLIKeyAt is the key of a further command-line session of a project,
// "cli:<project name>:<unix milliseconds>".
func CLIKeyAt(project string, t time.Time) string {
	return CLIKey(project) + ":" + strconv.FormatInt(t.UnixMilli(), 10)
}

// IsCLIKey reports whether key is a command-line key, which names a
// session within one project rather than across them.
func IsCLIKey(key string) bool { return SurfaceOf(key) == SurfaceCLI }

// RenameCLIKey moves a command-line key from project oldName to newName:
// "cli:old" and "cli:old:<ms>" become "cli:new" and "cli:new:<ms>". Other
// keys are left alone (ok false).
func RenameCLIKey(key, oldName, newName string) (string, bool) {
	prefix := CLIKey(oldName)
	switch {
	case key == prefix:
		return CLIKey(newName), true
	case strings.HasPrefix(key, prefix+":"):
		return CLIKey(newName) + key[len(prefix):], true
	}
	return key, false
}

// ShownKey is how a human reads the key of a session of member (a
// teammate's, Session.Member): the surface, then @member/ and the rest
// of the key ("cli:@alice/app"; "cli:@alice/" for a session without a
// key). It is for display only: the store keeps key and member apart.
// A session of nobody's shows its key.
func ShownKey(key, member string) string {
	if member == "" {
		return key
	}
	surface, rest, ok := strings.Cut(key, ":")
	if !ok {
		surface, rest = SurfaceCLI, key
	}
	return surface + ":@" + member + "/" + rest
}
