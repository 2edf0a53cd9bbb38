package synclog

import (
	"encoding/binary"
	"fmt"

	"github.com/loomhq/loom"
)

// TypeFragment is a piece of a record too large for the hub to take as
// one (a message of tens of megabytes: a pasted log, a tool's output): the
// encoded payload is cut into Of fragments, written as that many records
// in a row, and applied once the last has arrived. A loom that does not
// know the type says to upgrade, as for any newer record.
const TypeFragment Type = 12

// codecRaw is a fragment's body: its part and count, then its bytes,
// as they are (what they carry is compressed already, where it helps).
const codecRaw = 2

// MaxRecord is the most an encoded payload is as one record: a record
// the hub takes (loom.MaxSyncBody) once sealed, with room to spare. A
// larger one is written as fragments of FragmentSize.
const (
	MaxRecord    = loom.MaxSyncBody - 64<<10
	FragmentSize = 8 << 20
)

// Fragment is part Part (from 1) of Of of an encoded payload.
type Fragment struct {
	Part, Of uint32
	Data     []byte
}

// Type implements Payload.
func (*Fragment) Type() Type { return TypeFragment }

// Validate implements Payload.
func (f *Fragment) Validate() error {
	switch {
	case f.Of < 2 || f.Part < 1 || f.Part > f.Of:
		return invalid("fragment %d of %d", f.Part, f.Of)
	case len(f.Data) == 0 || len(f.Data) > FragmentSize:
		return invalid("fragment of %d bytes", len(f.Data))
	case uint64(f.Of)*FragmentSize > 2*MaxPayload:
		return invalid("a record of %d fragments", f.Of)
	}
	return nil
}

// Split returns b, a payload as Encode writes it, as the encoded
// fragments to write in its place; b itself when it fits one record.
func Split(b []byte) [][]byte {
	if len(b) <= MaxRecord {
		return [][]byte{b}
	}
	of := (len(b) + FragmentSize - 1) / FragmentSize
	out := make([][]byte, 0, of)
	for i := range of {
		data := b[i*FragmentSize : min(len(b), (i+1)*FragmentSize)]
		e := make([]byte, prefixSize+8, prefixSize+8+len(data))
		e[0], e[1], e[2] = FormatVersion, byte(TypeFragment), codecRaw
		binary.BigEndian.PutUint32(e[3:], uint32(i+1))
		binary.BigEndian.PutUint32(e[7:], uint32(of))
		out = append(out, append(e, data...))
	}
	return out
}

// decodeFragment reads a fragment's body (after the prefix) with codec.
func decodeFragment(codec byte, body []byte) (Payload, error) {
	if codec != codecRaw {
		return nil, fmt.Errorf("%w: fragment with codec %d", ErrCorrupt, codec)
	}
	if len(body) < 8 {
		return nil, fmt.Errorf("%w: fragment of %d bytes", ErrCorrupt, len(body))
	}
	f := &Fragment{Part: binary.BigEndian.Uint32(body), Of: binary.BigEndian.Uint32(body[4:]), Data: body[8:]}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("fragment record: %w", err)
	}
	return f, nil
}

// Join decodes the payload fragments 1 to Of of one record hold, in
// order. Anything else (a missing, repeated or foreign part) is
// ErrCorrupt.
func Join(frags []*Fragment) (Payload, error) {
	var b []byte
	for i, f := range frags {
		if f.Part != uint32(i+1) || f.Of != uint32(len(frags)) {
			return nil, fmt.Errorf("%w: fragment %d of %d where fragment %d of %d belongs", ErrCorrupt, f.Part, f.Of, i+1, len(frags))
		}
		b = append(b, f.Data...)
	}
	if len(b) > 0 && Type(b[min(1, len(b)-1)]) == TypeFragment {
		return nil, fmt.Errorf("%w: fragments of fragments", ErrCorrupt)
	}
	return Decode(b)
}
