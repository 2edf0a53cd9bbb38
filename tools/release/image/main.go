// Command image makes the OCI image of `loom serve`, a hub, from the
// Linux binaries of a GoReleaser release in dist/, without a Docker
// daemon or a registry (docs/release.md):
//
//	go run ./image -dist ../../dist
//
// It reads the release's version and commit from dist/metadata.json and
// its binaries from dist/artifacts.json, and writes
// dist/loom_VERSION_image.tar: an OCI image layout, as a tar, holding
// one image index with an image for each Linux processor built. Each
// image is one layer over nothing: /usr/local/bin/loom, /data (the
// hub's LOOM_HOME, owned by the user the image runs as) and /tmp. Every
// time in it is the binary's, which GoReleaser sets to the commit's, so
// the same commit gives the same image. `docker load` and `podman load`
// read the tar; skopeo copies it to a registry:
//
//	skopeo copy --all oci-archive:dist/loom_1.2.3_image.tar docker://ghcr.io/loomhq/loom:1.2.3
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user the hub runs as, and the port and home it is given.
const (
	uid  = 65532
	port = "7878"
	home = "/data"
)

func main() {
	dist := flag.String("dist", "dist", "GoReleaser's dist directory")
	repo := flag.String("repo", "ghcr.io/loomhq/loom", "the image's name, without its tag")
	flag.Parse()
	if err := run(*dist, *repo); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

type metadata struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

type binary struct {
	Path   string `json:"path"`
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
	Type   string `json:"type"`
}

func run(dist, repo string) error {
	var meta metadata
	if err := readJSON(filepath.Join(dist, "metadata.json"), &meta); err != nil {
		return err
	}
	var arts []binary
	if err := readJSON(filepath.Join(dist, "artifacts.json"), &arts); err != nil {
		return err
	}
	var bins []binary
	for _, a := range arts {
		if a.Type == "Binary" && a.Goos == "linux" {
			bins = append(bins, a)
		}
	}
	if len(bins) == 0 {
		return fmt.Errorf("%s lists no Linux binary: the image needs one", filepath.Join(dist, "artifacts.json"))
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i].Goarch < bins[j].Goarch })

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range bins {
		img, err := image(b, meta)
		if err != nil {
			return err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img,
			Descriptor: v1.Descriptor{
				Platform: &v1.Platform{OS: b.Goos, Architecture: b.Goarch},
			},
		})
	}

	dir, err := os.MkdirTemp("", "loom-image-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("writing the image layout: %w", err)
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		// podman names the image by the first, docker by the second.
		"org.opencontainers.image.ref.name": meta.Version,
		"io.containerd.image.name":          repo + ":" + meta.Version,
	})); err != nil {
		return fmt.Errorf("writing the image layout: %w", err)
	}
	out := filepath.Join(dist, "loom_"+meta.Version+"_image.tar")
	if err := tarDir(dir, out, stamp(bins[0].Path)); err != nil {
		return err
	}
	fmt.Printf("%s: %s:%s for %s\n", out, repo, meta.Version, strings.Join(platforms(bins), ", "))
	return nil
}

func platforms(bins []binary) []string {
	var p []string
	for _, b := range bins {
		p = append(p, b.Goos+"/"+b.Goarch)
	}
	return p
}

// stamp is the binary's modification time: GoReleaser gives it the
// commit's (mod_timestamp).
func stamp(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Unix(0, 0).UTC()
	}
	return fi.ModTime().UTC().Truncate(time.Second)
}

func image(b binary, meta metadata) (v1.Image, error) {
	loom, err := os.ReadFile(b.Path)
	if err != nil {
		return nil, fmt.Errorf("reading the %s/%s binary: %w", b.Goos, b.Goarch, err)
	}
	t := stamp(b.Path)
	rootfs, err := rootTar(loom, t)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(rootfs)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: t}, CreatedBy: "loom " + meta.Version + " (tools/release/image)"},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = b.Goos, b.Goarch
	cfg.Created = v1.Time{Time: t}
	cfg.Config = v1.Config{
		Entrypoint:   []string{"/usr/local/bin/loom"},
		Cmd:          []string{"serve", "--addr", "0.0.0.0:" + port},
		Env:          []string{"PATH=/usr/local/bin", "LOOM_HOME=" + home},
		User:         fmt.Sprintf("%d:%d", uid, uid),
		WorkingDir:   home,
		ExposedPorts: map[string]struct{}{port + "/tcp": {}},
		Volumes:      map[string]struct{}{home: {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "loom",
			"org.opencontainers.image.version":  meta.Version,
			"org.opencontainers.image.revision": meta.Commit,
			"org.opencontainers.image.source":   "https://github.com/loomhq/loom",
			"org.opencontainers.image.licenses": "MIT",
		},
	}
	return mutate.ConfigFile(img, cfg)
}

// rootTar is the image's one layer: loom, the hub's home, /tmp, and the
// user it runs as in /etc/passwd and /etc/group.
func rootTar(loom []byte, t time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nloom:x:%d:%d:loom:%s:/sbin/nologin\n", uid, uid, home)
	group := fmt.Sprintf("root:x:0:\nloom:x:%d:\n", uid)
	entries := []struct {
		name string
		mode int64
		uid  int
		body []byte
		dir  bool
	}{
		{name: "data/", mode: 0o700, uid: uid, dir: true},
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, body: []byte(group)},
		{name: "etc/passwd", mode: 0o644, body: []byte(passwd)},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: "usr/local/bin/loom", mode: 0o755, body: loom},
	}
	for _, e := range entries {
		h := &tar.Header{
			Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid,
			ModTime: t, Format: tar.FormatPAX,
			Typeflag: tar.TypeReg, Size: int64(len(e.body)),
		}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarDir writes the layout in dir to the tar out, its names sorted and
// every time t, so that the same image gives the same tar.
func tarDir(dir, out string, t time.Time) (err error) {
	var names []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		names = append(names, p)
		return nil
	}); err != nil {
		return err
	}
	slices.Sort(names)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	tw := tar.NewWriter(f)
	for _, p := range names {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: t, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: fi.Size()}
		if fi.IsDir() {
			h.Name, h.Mode, h.Typeflag, h.Size = h.Name+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.IsDir() {
			continue
		}
		if err := copyFile(tw, p); err != nil {
			return err
		}
	}
	return tw.Close()
}

func copyFile(w io.Writer, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	_, err = io.Copy(w, f)
	return err
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist: run GoReleaser first", path)
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}
