package synclog

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode decodes any bytes. Decode must not panic; what it refuses is
// ErrCorrupt, ErrInvalid or ErrNewer; and what it accepts encodes again
// to bytes that decode, and whose encoding is stable from then on.
func FuzzDecode(f *testing.F) {
	for _, p := range samples() {
		b := mustEncode(f, p)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte{})
	f.Add([]byte{FormatVersion, byte(TypeRestored), codecJSON})
	f.Add([]byte{FormatVersion, byte(TypeMessagesAppended), codecJSON, '{', '}'})
	f.Add([]byte{FormatVersion, byte(TypeImported), codecJSON, 'n', 'u', 'l', 'l'})
	f.Add([]byte{FormatVersion, 99, codecZstd})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			if p != nil {
				t.Fatalf("Decode returned %v with error %v", p, err)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNewer) {
				t.Fatalf("Decode error %v is none of ErrCorrupt, ErrInvalid, ErrNewer", err)
			}
			return
		}
		once, err := Encode(p)
		if err != nil {
			t.Fatalf("a decoded %s does not encode: %v", p.Type(), err)
		}
		q, err := Decode(once)
		if err != nil {
			t.Fatalf("a re-encoded %s does not decode: %v", p.Type(), err)
		}
		twice, err := Encode(q)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("encoding of %s is not stable: %v", p.Type(), err)
		}
	})
}

// FuzzHeader reads any bytes as a header: no panic, and a header it
// accepts writes back the same bytes.
func FuzzHeader(f *testing.F) {
	b, err := Header{Host: hostA, Index: 1, HLC: NewHLC(t0, 0), KeyID: keyID}.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:20])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Header
		if err := h.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrBadHeader) {
				t.Fatalf("UnmarshalBinary error %v is not ErrBadHeader", err)
			}
			return
		}
		back, err := h.MarshalBinary()
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("header %x reads as %v, which writes %x, %v", b, h, back, err)
		}
	})
}
