package envelope

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// fuzzRecord is a record sealed for FuzzOpen.
type fuzzRecord struct {
	header, sealed, plaintext []byte
}

// fuzzRecords seals records with fixed randomness, so that they are the
// same in every fuzzing process and in the corpus it keeps: FuzzOpen can
// then tell a record that truly opens from a forgery.
func fuzzRecords(t testing.TB, key Key) []fuzzRecord {
	random := rand.NewChaCha8([32]byte{'l', 'o', 'o', 'm'})
	var records []fuzzRecord
	for _, r := range []fuzzRecord{
		{header: []byte("host a, index 1"), plaintext: []byte("a message")},
		{header: []byte("host a, index 2"), plaintext: []byte("another message")},
		{header: nil, plaintext: nil},
		{header: []byte("host b, index 1"), plaintext: bytes.Repeat([]byte("long "), 100)},
	} {
		sealed, err := seal(key, r.header, r.plaintext, random)
		if err != nil {
			t.Fatal(err)
		}
		r.sealed = sealed
		records = append(records, r)
	}
	return records
}

// FuzzOpen opens any bytes under any header. Open must not panic; it must
// open only the records sealed for the fuzz, each under its own header and
// to its own plaintext; and it must fail with ErrWrongKey or ErrTampered,
// ErrWrongKey only for a record whose key id is not this key's.
func FuzzOpen(f *testing.F) {
	key, other := testKey(1), testKey(2)
	records := fuzzRecords(f, key)
	for _, r := range records {
		f.Add(r.header, r.sealed)
		f.Add(r.header, r.sealed[:len(r.sealed)-1])
	}
	otherSealed := fuzzRecords(f, other)[0]
	f.Add(otherSealed.header, otherSealed.sealed)
	f.Add(records[0].header, records[1].sealed)
	f.Add([]byte{}, []byte{})
	f.Add([]byte("h"), []byte{Version})
	f.Fuzz(func(t *testing.T, header, sealed []byte) {
		got, err := Open(key, header, sealed)
		if err == nil {
			for _, r := range records {
				if bytes.Equal(r.header, header) && bytes.Equal(r.sealed, sealed) {
					if !bytes.Equal(got, r.plaintext) {
						t.Fatalf("opened %q, sealed %q", got, r.plaintext)
					}
					return
				}
			}
			t.Fatalf("opened a record never sealed: header %x, record %x, plaintext %q", header, sealed, got)
		}
		wrongKey, tampered := errors.Is(err, ErrWrongKey), errors.Is(err, ErrTampered)
		if wrongKey == tampered || got != nil {
			t.Fatalf("Open = %q, %v", got, err)
		}
		if wrongKey && (len(sealed) < Overhead || bytes.Equal(sealed[idOffset:nonceOffset], key.id[:])) {
			t.Fatalf("ErrWrongKey for a record with this key's id: %v", err)
		}
	})
}

// FuzzParseKey parses any text. ParseKey must not panic; a key it accepts
// is the text, but for case and surrounding space; what it refuses is
// ErrNotKey or ErrMistypedKey.
func FuzzParseKey(f *testing.F) {
	txt := testKey(1).Text()
	f.Add(txt)
	f.Add(" " + strings.ToUpper(txt) + "\n")
	f.Add(txt[:30])
	f.Add(txt[:30] + "1" + txt[31:])
	f.Add(txt[:30] + txt[31:32] + txt[30:31] + txt[32:])
	f.Add("loomkey1-")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			if !errors.Is(err, ErrNotKey) && !errors.Is(err, ErrMistypedKey) || k != (Key{}) {
				t.Fatalf("ParseKey(%q) = %v, %v", s, k, err)
			}
			return
		}
		if k.isZero() || !strings.EqualFold(strings.TrimSpace(s), k.Text()) {
			t.Fatalf("ParseKey(%q) = %v, whose text is %q", s, k, k.Text())
		}
		again, err := ParseKey(k.Text())
		if err != nil || again != k {
			t.Fatalf("ParseKey(%q) = %v, %v; want %v", k.Text(), again, err, k)
		}
	})
}
