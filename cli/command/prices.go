package command

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/loomhq/loom/internal/safefile"
	"github.com/loomhq/loom/pricing"
)

// PricesFile is the price list `loom usage prices --update` fetched, in
// the state directory.
const PricesFile = "prices.json"

// maxPricesFile bounds the fetched list read back.
const maxPricesFile = 64 << 20

// PriceTable is the price table reports use: config.toml's [prices] in
// front of the list `loom usage prices --update` fetched, or the
// bundled one when none was fetched (or the bundled one is newer). The
// fetched list is read when a price is first looked up.
func (inv *Invocation) PriceTable() (*pricing.Table, error) {
	t, err := ConfigLoader(inv.Config).PriceTable()
	if err != nil {
		return nil, err
	}
	if d, err := inv.Dirs(); err == nil {
		path := filepath.Join(d.State, PricesFile)
		t.UseList(func() (*pricing.List, error) { return ReadPriceList(path) })
	}
	return t, nil
}

// ReadPriceList reads the price list at path, as WritePriceList wrote it.
func ReadPriceList(path string) (*pricing.List, error) {
	f, _, err := safefile.Open(path, maxPricesFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return pricing.ReadList(f)
}

// WritePriceList keeps l as the price list at path, whole or not at all.
func WritePriceList(path string, l *pricing.List) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := l.WriteList(&b); err != nil {
		return err
	}
	return safefile.WriteFile(path, b.Bytes(), 0o600)
}
