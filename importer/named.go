package importer

import (
	"context"
	"fmt"
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
	info, err := StatRoot(tool, root)
	if info == nil {
		return nil, err
	}
	if !info.IsDir() {
		return []Bundle{{Files: []string{root}}}, nil
	}
	var out []Bundle
	var unreadable Unreadable
	err = WalkDir(ctx, root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			unreadable.Add(path, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if path != root && HeavyDirs[d.Name()] {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && match(d.Name()) {
			out = append(out, Bundle{Files: []string{path}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: listing %s: %w", tool, root, err)
	}
	return out, unreadable.Err()
}
