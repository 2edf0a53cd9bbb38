package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/loomhq/loom"
)

// Profile is a named system prompt with an optional model.
type Profile struct {
	Name   string
	Prompt string `toml:"prompt"`
	Model  string `toml:"model"`
}

// LoadProfile reads profile name from dir: NAME.toml (prompt and model) or
// NAME.md (the prompt alone). "default" without a file is the empty
// profile.
func LoadProfile(dir, name string) (*Profile, error) {
	if name == "" {
		name = "default"
	}
	if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return nil, loom.Errorf(loom.EINVALID, "invalid profile name %q", name)
	}
	p := &Profile{Name: name}
	if _, err := toml.DecodeFile(filepath.Join(dir, name+".toml"), p); err == nil {
		p.Name = name
		return p, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, loom.Errorf(loom.EINVALID, "profile %s: %v", name, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, name+".md"))
	if err == nil {
		p.Prompt = string(b)
		return p, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	if name == "default" {
		return p, nil
	}
	avail := Profiles(dir)
	return nil, loom.Errorf(loom.ENOTFOUND, "no profile %q in %s (have: %s)", name, dir, strings.Join(append([]string{"default"}, avail...), ", "))
}

// Profiles lists the profile names found in dir.
func Profiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".toml" && ext != ".md") {
			continue
		}
		n := strings.TrimSuffix(e.Name(), ext)
		if !seen[n] && n != "default" {
			seen[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
