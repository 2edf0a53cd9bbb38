package team_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/secrets/secretstest"
)

// TestTeamRecordsRedactedOnWrite: alice, whose store redacts what it
// writes ([secrets] redact_on_write), shares a session holding a token;
// after alice's and bob's syncs no byte of the hub's tables (records,
// heads, claims, chain: every table of its schema read as text) holds
// the token, and on SQLite no file of either member's home does (their
// stores and write-ahead logs, team stores, kept originals, team state),
// while both hold the marker that replaced it. With the setting off,
// alice's own store keeps the token as she wrote it (the control: the
// scan finds a token a store holds), and still neither the hub nor
// bob's copy holds it: a shared session is redacted as it is sealed.
func TestTeamRecordsRedactedOnWrite(t *testing.T) {
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "on", false: "off"}[on]
		t.Run(name, func(t *testing.T) {
			if !on {
				clitest.SkipWhenRedactingOnWrite(t, "the control keeps the token as it came")
				clitest.SkipOnPostgres(t, "the control reads the members' SQLite files")
			}
			p := newPair(t)
			alice, bob := p.alice, p.bob
			cfg := "[secrets]\nredact_on_write = " + map[bool]string{true: "true", false: "false"}[on] + "\n"
			clitest.WriteConfig(t, alice.fx, cfg)
			clitest.WriteConfig(t, bob.fx, cfg)
			secret := secretstest.New(106).Secret("github-token")
			const sid = "0196a3c6-1c4e-7d3f-9a2b-5e6f7a8b9e06"
			importSession(t, alice, sid, "bandicoot release", "push the bandicoot release with "+secret.Text, "Pushed; the remote uses "+secret.Text)
			alice.must(t, "team", "share", "--content", "--yes")
			alice.must(t, "team", "sync")
			bob.must(t, "team", "sync")
			if r := bob.run(t, "session", "show", "--team", "core", sid); r.Code != 0 {
				t.Fatalf("bob's copy: %d %s", r.Code, r.Stderr)
			}
			token := []byte(secret.Value)

			hub := hubTablesText(t, p)
			if bytes.Contains(hub, token) {
				t.Errorf("the hub's tables hold the token in the clear")
			}
			var records int
			if err := p.pool.QueryRow(context.Background(), `SELECT count(*) FROM team_records WHERE team_id = $1`, p.id).Scan(&records); err != nil || records == 0 {
				t.Errorf("the hub holds no record of the team (%d, %v): the session was not shared where it was looked for", records, err)
			}
			if clitest.OnPostgres() {
				return
			}
			for _, m := range []*member{alice, bob} {
				found, marked := scanHome(t, m.fx.Home, token)
				switch {
				case m == alice && !on:
					// The control: alice's own store keeps what she
					// wrote as it came, and the scan finds it.
					if len(found) == 0 {
						t.Errorf("with redact_on_write off, alice's home holds no copy of the token: the scan does not read where a store keeps it")
					}
				case len(found) > 0:
					t.Errorf("%s's home holds the token in the clear in %v", m.name, found)
				case !marked:
					t.Errorf("%s's home holds no marker: the session was not found where it was looked for", m.name)
				}
			}
		})
	}
}

// hubTablesText is every row of every table of the hub's schema read as
// text (bytea as its hex, which a token in the clear also shows in) and
// the records' bytes as stored.
func hubTablesText(t *testing.T, p *pair) []byte {
	t.Helper()
	ctx := context.Background()
	rows, err := p.pool.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var all bytes.Buffer
	for _, n := range tables {
		all.WriteString(n + "\n")
		rows, err := p.pool.Query(ctx, `SELECT r::text FROM "`+n+`" r`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			all.WriteString(s + "\n")
		}
		rows.Close()
	}
	rows, err = p.pool.Query(ctx, `SELECT header, body FROM team_records WHERE team_id = $1`, p.id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var h, b []byte
		if err := rows.Scan(&h, &b); err != nil {
			t.Fatal(err)
		}
		all.Write(h)
		all.Write(b)
	}
	rows.Close()
	return all.Bytes()
}

// scanHome returns the files under home holding token, and whether any
// holds a redaction's marker.
func scanHome(t *testing.T, home string, token []byte) (found []string, marked bool) {
	t.Helper()
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, token) {
			rel, _ := filepath.Rel(home, path)
			found = append(found, rel)
		}
		marked = marked || bytes.Contains(data, []byte("[REDACTED:"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found, marked
}
