package migrate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// fakeDB records what a migration transaction applies; its version
// changes only when the transaction commits.
type fakeDB struct {
	version, txs int
	applied      []int
	fail         int
}

func (d *fakeDB) Version(context.Context) (int, error) { return d.version, nil }

func (d *fakeDB) InTx(_ context.Context, latest int, fn func(Tx) error) error {
	d.txs++
	tx := &fakeTx{d: d, version: d.version}
	if err := fn(tx); err != nil {
		return err
	}
	d.version = tx.version
	return nil
}

type fakeTx struct {
	d       *fakeDB
	version int
}

func (t *fakeTx) Version(context.Context) (int, error) { return t.version, nil }

func (t *fakeTx) Apply(_ context.Context, m Migration) error {
	if m.Version == t.d.fail {
		return errors.New("boom")
	}
	t.d.applied = append(t.d.applied, m.Version)
	t.version = m.Version
	return nil
}

func TestLoadAndRun(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0002_b.sql": {Data: []byte("B")},
		"m/0001_a.sql": {Data: []byte("A")},
		"m/0003_c.sql": {Data: []byte("C")},
		"m/README":     {Data: []byte("not a migration")},
	}
	ms, err := Load(fsys, "m")
	if err != nil || len(ms) != 3 || ms[0].SQL != "A" || ms[2].Version != 3 || ms[1].Name != "m/0002_b.sql" {
		t.Fatalf("load = %+v, %v", ms, err)
	}
	db := &fakeDB{version: 1}
	if err := Run(context.Background(), db, ms); err != nil || db.version != 3 || len(db.applied) != 2 || db.applied[0] != 2 {
		t.Fatalf("run from 1 = %+v, %v", db, err)
	}
	// Up to date: no transaction at all.
	if err := Run(context.Background(), db, ms); err != nil || db.txs != 1 {
		t.Fatalf("run when up to date = %+v, %v", db, err)
	}
	// A failing migration names itself and commits nothing.
	db = &fakeDB{fail: 2}
	if err := Run(context.Background(), db, ms); err == nil || !strings.Contains(err.Error(), "m/0002_b.sql") || db.version != 0 {
		t.Fatalf("failed run = %+v, %v", db, err)
	}
	fsys["m/0005_e.sql"] = &fstest.MapFile{Data: []byte("E")}
	if _, err := Load(fsys, "m"); err == nil || !strings.Contains(err.Error(), "out of sequence") {
		t.Fatalf("a gap = %v", err)
	}
}
