package importer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WalkDir walks the tree at root as filepath.WalkDir does, calling fn
// for root and everything below it in lexical order, but follows
// symbolic links: a link to a directory is walked as a directory (under
// the link's own path, so names below it read as if it were one), and a
// link to a file is passed with the type of the file it leads to. Dotfile
// managers and moved disks leave tools' directories as links; without
// this they would hold nothing. Each real directory is walked once, so a
// link back up the tree ends there; a dangling link is passed over.
// The walk stops when ctx ends, with its error.
func WalkDir(ctx context.Context, root string, fn fs.WalkDirFunc) error {
	fi, err := os.Stat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = walk(ctx, root, fs.FileInfoToDirEntry(fi), fn, map[string]bool{})
	}
	if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}

func walk(ctx context.Context, path string, d fs.DirEntry, fn fs.WalkDirFunc, seen map[string]bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if errors.Is(err, filepath.SkipDir) && d.IsDir() {
			return nil // skip this directory only
		}
		return err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if seen[real] {
		return nil
	}
	seen[real] = true
	entries, err := os.ReadDir(path)
	if err != nil {
		if err := fn(path, d, err); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				return nil
			}
			return err
		}
	}
	for _, e := range entries {
		p := filepath.Join(path, e.Name())
		if e.Type()&fs.ModeSymlink != 0 {
			fi, err := os.Stat(p)
			if err != nil {
				continue // dangling, or a loop of links
			}
			e = fs.FileInfoToDirEntry(fi)
		}
		if err := walk(ctx, p, e, fn, seen); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				if e.IsDir() {
					continue
				}
				return nil // SkipDir from a file skips the rest of its directory
			}
			return err
		}
	}
	return nil
}

// EntryMode is the type of directory entry e of dir, of what it leads to
// when it is a symbolic link (as WalkDir reads links); a dangling link is
// neither a file nor a directory.
func EntryMode(dir string, e fs.DirEntry) fs.FileMode {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.Type()
	}
	fi, err := os.Stat(filepath.Join(dir, e.Name()))
	if err != nil {
		return fs.ModeSymlink | fs.ModeIrregular
	}
	return fi.Mode().Type()
}
