package realcorpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Source is one origin of clean material and how many messages it gave.
type Source struct {
	Name, Root string
	Files      int
	Messages   int
	// Missing says why the source gave nothing here, if it did not.
	Missing string
}

// GoRoot adds the Go toolchain's own tree: src, test, lib, misc, api
// and doc (code, testdata, JSON and YAML fixtures, go.sum files,
// package-lock.json …). It is the same for every machine with the same
// Go version.
func (c *Cutter) GoRoot(goroot string, stride int) Source {
	s := Source{Name: "goroot", Root: goroot}
	before := len(c.Out)
	for _, dir := range []string{"src", "test", "lib", "misc", "api", "doc"} {
		n, err := c.walkUnder("goroot", goroot, filepath.Join(goroot, dir), stride, nil)
		if err != nil && dir == "src" {
			s.Missing = err.Error()
		}
		s.Files += n
	}
	s.Messages = len(c.Out) - before
	return s
}

// ModCache adds the module cache's copies of the modules a go.mod
// requires (the versions this module builds with), those present.
func (c *Cutter) ModCache(modcache string, gomod []byte, stride int) (Source, []string) {
	s := Source{Name: "modcache", Root: modcache}
	before := len(c.Out)
	var missing []string
	for _, m := range GoModModules(gomod) {
		dir := filepath.Join(modcache, filepath.FromSlash(m))
		if _, err := os.Stat(dir); err != nil {
			missing = append(missing, m)
			continue
		}
		n, _ := c.walkUnder("modcache", modcache, dir, stride, nil)
		s.Files += n
	}
	s.Messages = len(c.Out) - before
	if s.Messages == 0 {
		s.Missing = "no module of go.mod is in " + modcache
	}
	return s, missing
}

func (c *Cutter) walkUnder(source, root, dir string, stride int, keep func(string, fs.FileInfo) bool) (int, error) {
	rel, _ := filepath.Rel(root, dir)
	rel = filepath.ToSlash(rel) + "/"
	sub := &Cutter{MaxChunks: c.MaxChunks, Exclusions: c.Exclusions, prefix: c.prefix + rel}
	n, err := sub.Walk(source, dir, stride, 1<<20, keep)
	c.Out = append(c.Out, sub.Out...)
	c.Skipped = append(c.Skipped, sub.Skipped...)
	return n, err
}

// Debian adds what a Debian system keeps as text: the packages'
// copyright files, /etc, and dpkg's status file. What a machine lacks
// is skipped.
func (c *Cutter) Debian(root string) Source {
	s := Source{Name: "debian", Root: root}
	before := len(c.Out)
	if _, err := os.Stat(filepath.Join(root, "var/lib/dpkg/status")); err != nil {
		s.Missing = "not a Debian system: no /var/lib/dpkg/status"
		return s
	}
	n, _ := c.walkUnder("debian", root, filepath.Join(root, "usr/share/doc"), 1, func(rel string, _ fs.FileInfo) bool {
		return strings.Count(rel, "/") == 1 && strings.HasSuffix(rel, "/copyright")
	})
	s.Files += n
	n, _ = c.walkUnder("debian", root, filepath.Join(root, "etc"), 1, nil)
	s.Files += n
	if b, err := os.ReadFile(filepath.Join(root, "var/lib/dpkg/status")); err == nil {
		c.Add("debian", "var/lib/dpkg/status", b)
		s.Files++
	}
	s.Messages = len(c.Out) - before
	return s
}

// Tarball adds the text files of a gzipped tar (testdata made here by
// real programs), under source.
func (c *Cutter) Tarball(source, path string) Source {
	s := Source{Name: source, Root: path}
	before := len(c.Out)
	f, err := os.Open(path)
	if err != nil {
		s.Missing = err.Error()
		return s
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		s.Missing = err.Error()
		return s
	}
	tr := tar.NewReader(zr)
	// these are small and made for the corpus: every chunk is kept
	keep := c.MaxChunks
	c.MaxChunks = 0
	defer func() { c.MaxChunks = keep }()
	for {
		h, err := tr.Next()
		if err != nil {
			if err != io.EOF {
				s.Missing = fmt.Sprint(err)
			}
			break
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		var b bytes.Buffer
		if _, err := io.Copy(&b, tr); err != nil || !Text(b.Bytes()) {
			continue
		}
		s.Files++
		c.Add(source, h.Name, b.Bytes())
	}
	s.Messages = len(c.Out) - before
	return s
}
