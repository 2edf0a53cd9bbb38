package importer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WalkDir walks the tree at root as filepath.WalkDir does, calling fn
// for root and everything below it in lexical order, but follows
// symbolic links: a link to a directory is walked as a directory (under
// the link's own path, so names below it read as if it were one), and a
// link to a file is passed with the type of the file it leads to. Dotfile
// managers and moved disks leave tools' directories as links; without
// this they would hold nothing. Each real directory is walked once, so a
// link back up the tree ends there; a link that leads nowhere (dangling,
// or a loop of links) is passed to fn with its own entry and an error
// (ErrDanglingLink, ErrLinkLoop), and not followed.
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
				// Dangling, or a loop of links: fn hears of it with the
				// link's own entry, and may say so where the link is
				// named as what it looks for.
				if err := fn(p, e, &fs.PathError{Op: "stat", Path: p, Err: linkError(err)}); err != nil && !errors.Is(err, filepath.SkipDir) {
					return err
				}
				continue
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

// ErrDanglingLink and ErrLinkLoop are why a symbolic link leads nowhere.
var (
	ErrDanglingLink = errors.New("a symbolic link to nothing (its target is gone)")
	ErrLinkLoop     = errors.New("a loop of symbolic links")
)

// IsLink says whether the entry WalkDir passed with an error is a
// symbolic link that leads nowhere: a reader says so only where the
// link is named as one of its session files.
func IsLink(d fs.DirEntry) bool { return d != nil && d.Type()&fs.ModeSymlink != 0 }

// linkError says why os.Stat of a link failed, in words: its target is
// gone, or the links loop; any other error as it is.
func linkError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ErrDanglingLink
	case errors.Is(err, syscall.ELOOP):
		return ErrLinkLoop
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
