package importer

import (
	"context"
	"io/fs"
)

// HeavyDirs are directories that a search for a tool's files in a
// user's projects does not go into: dependencies, builds, caches and
// version control, which hold no session files and can hold many
// thousands of directories.
var HeavyDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true, "vendor": true,
	".venv": true, "venv": true, "__pycache__": true, ".tox": true, ".mypy_cache": true,
	".pytest_cache": true, ".ruff_cache": true, "target": true, ".next": true,
	".cache": true, ".gradle": true, ".terraform": true, "bower_components": true,
}

// NamedFiles is a Bundles for a tool whose session files are known by
// their name (match) and may be anywhere below root: one bundle per
// file, HeavyDirs left out; root itself may be one file, read whatever
// its name. Symbolic links are followed (WalkDir); directories that
// cannot be listed below root are reported beside the bundles found
// (Unreadable).
func NamedFiles(ctx context.Context, tool, root string, match func(name string) bool) ([]Bundle, error) {
	return fileBundles(ctx, tool, root, HeavyDirs, func(_ string, d fs.DirEntry) bool { return match(d.Name()) })
}
