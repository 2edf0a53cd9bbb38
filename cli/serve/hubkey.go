package serve

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/loomhq/loom"
)

// hubKey returns the key of the hub's checkpoints of teams' chains, made
// at the first start of a hub whose store keeps teams; nil for a store
// that keeps none.
func hubKey(opts *Options, st loom.Engine) ([]byte, error) {
	if st.Optional().TeamHub == nil || opts.Dirs == nil {
		return nil, nil
	}
	d, err := opts.Dirs()
	if err != nil {
		return nil, err
	}
	// Kept outside the store, so that whoever edits the store's rows
	// alone cannot forge a checkpoint (docs/team.md, "Checkpoints: the
	// chain verified once").
	path := d.HubKeyFile()
	for range 2 {
		b, err := os.ReadFile(path)
		if err == nil {
			if len(b) < 32 {
				return nil, fmt.Errorf("hub key %s: %d bytes, and it is 32: remove it and a new one is made (the hub then verifies each team's chain once again)", path, len(b))
			}
			return b, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("hub key: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("hub key: %w", err)
		}
		key := make([]byte, 32)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // another process made it: read it
		}
		if err != nil {
			return nil, fmt.Errorf("hub key: %w", err)
		}
		_, werr := f.Write(key)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return nil, fmt.Errorf("hub key: %w", werr)
		}
		return key, nil
	}
	return nil, fmt.Errorf("hub key %s: made and gone again", path)
}
