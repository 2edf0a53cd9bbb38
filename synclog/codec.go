package synclog

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom/envelope"
)

// FormatVersion is the version of a payload's encoding, its first byte.
const FormatVersion = 1

// The codecs of an encoded payload's body, its third byte.
const (
	// codecJSON is the payload's JSON as it is: what small payloads,
	// which compression makes no smaller, are written as.
	codecJSON = 0
	// codecZstd is the payload's JSON compressed with zstd, one frame.
	codecZstd = 1
)

// prefixSize is the length of an encoded payload's prefix: version, type,
// codec.
const prefixSize = 3

// MaxPayload bounds a payload's JSON, and so what Decode allocates for one
// record: 64 MiB. Imports and a store's history are written as records
// of far less (sessionstore.ChunkLen).
const MaxPayload = 64 << 20

// Errors of Decode. Each comes wrapped with what was found.
var (
	// ErrNewer reports a record written by a newer loom, in a format
	// version, payload type or codec this loom does not know. Its message
	// says to upgrade loom.
	ErrNewer = errors.New("sync record from a newer loom")
	// ErrCorrupt reports bytes that are not an encoded payload.
	ErrCorrupt = errors.New("corrupt sync record")
)

// zstdEncoder and zstdDecoder are shared: both are safe for concurrent
// EncodeAll and DecodeAll, and costly to make.
var (
	zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	})
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderMaxMemory(MaxPayload), zstd.WithDecoderMaxWindow(MaxPayload),
			zstd.WithDecoderConcurrency(0))
	})
)

// Encode returns p's bytes, to be sealed: a version byte (FormatVersion),
// p's type, a codec byte, then p as JSON, compressed with zstd unless
// that makes it no smaller. JSON is the shape loom's export and API
// already give sessions and messages; zstd takes out the repetition of
// its field names. Compression comes before sealing, since ciphertext
// does not compress. Encode refuses a payload that is not valid.
func Encode(p Payload) ([]byte, error) {
	if p == nil {
		return nil, invalid("no payload")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Type() == TypeFragment {
		return nil, invalid("a fragment is written by Split, not encoded")
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode %s record: %w", p.Type(), err)
	}
	if len(body) > MaxPayload {
		return nil, fmt.Errorf("encode %s record: %d bytes of JSON, more than the %d a record holds", p.Type(), len(body), MaxPayload)
	}
	enc, err := zstdEncoder()
	if err != nil {
		return nil, fmt.Errorf("encode %s record: %w", p.Type(), err)
	}
	out := make([]byte, prefixSize, prefixSize+len(body))
	out[0], out[1], out[2] = FormatVersion, byte(p.Type()), codecZstd
	out = enc.EncodeAll(body, out)
	if len(out) >= prefixSize+len(body) {
		out = append(out[:prefixSize], body...)
		out[2] = codecJSON
	}
	return out, nil
}

// Decode reads what Encode writes. It never panics, whatever b holds:
// bytes that are not a payload are ErrCorrupt (or ErrInvalid when they
// decode to a payload that breaks its type's rules), and a version, type
// or codec this loom does not know is ErrNewer. It allocates at most
// about MaxPayload for the JSON it decompresses.
func Decode(b []byte) (Payload, error) {
	if len(b) < prefixSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorrupt, len(b))
	}
	if b[0] != FormatVersion {
		if b[0] > FormatVersion {
			return nil, fmt.Errorf("%w: format version %d, and this loom reads version %d; upgrade loom", ErrNewer, b[0], FormatVersion)
		}
		return nil, fmt.Errorf("%w: format version %d", ErrCorrupt, b[0])
	}
	t := Type(b[1])
	if t == TypeFragment {
		return decodeFragment(b[2], b[prefixSize:])
	}
	p := newPayload(t)
	if p == nil {
		return nil, fmt.Errorf("%w: record of %s, which this loom does not know; upgrade loom", ErrNewer, t)
	}
	body := b[prefixSize:]
	switch b[2] {
	case codecJSON:
	case codecZstd:
		dec, err := zstdDecoder()
		if err != nil {
			return nil, fmt.Errorf("decode %s record: %w", t, err)
		}
		if body, err = dec.DecodeAll(body, nil); err != nil {
			return nil, fmt.Errorf("%w: %s record: %w", ErrCorrupt, t, err)
		}
	default:
		return nil, fmt.Errorf("%w: %s record compressed with codec %d, which this loom does not know; upgrade loom", ErrNewer, t, b[2])
	}
	if len(body) > MaxPayload {
		return nil, fmt.Errorf("%w: %s record of %d bytes, more than %d", ErrCorrupt, t, len(body), MaxPayload)
	}
	if err := json.Unmarshal(body, p); err != nil {
		return nil, fmt.Errorf("%w: %s record: %w", ErrCorrupt, t, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s record: %w", t, err)
	}
	return p, nil
}

// Seal encodes p and seals it with key under header h, whose KeyID must be
// key's: what a host hands the hub beside h's binary form.
func Seal(key envelope.Key, h Header, p Payload) ([]byte, error) {
	body, err := Encode(p)
	if err != nil {
		return nil, fmt.Errorf("seal record %d of host %s: %w", h.Index, h.Host, err)
	}
	return SealEncoded(key, h, body)
}

// SealEncoded seals body, a payload as Encode wrote it (a store's log
// keeps them so), under header h: what Seal does after encoding. A
// header that says Signed has the sealed record signed too, with the
// key's signing key (envelope.SealSigned, under RecordDomain).
func SealEncoded(key envelope.Key, h Header, body []byte) ([]byte, error) {
	if h.KeyID != key.ID() {
		return nil, fmt.Errorf("seal record %d: header names key %s, sealing with %s", h.Index, h.KeyID, key.ID())
	}
	hb, err := h.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("seal record %d: %w", h.Index, err)
	}
	if h.Signed {
		return envelope.SealSigned(key, key.SigningKey(), RecordDomain, hb, body)
	}
	return envelope.Seal(key, hb, body)
}

// RecordDomain is what a signature of a user's own record is made
// under (envelope.Signed): a team record's signature is under another.
const RecordDomain = "loom sync record 1\n"

// Open opens a record sealed under header h with key and decodes its
// payload. A record sealed with another key is envelope.ErrWrongKey, one
// altered on the way envelope.ErrTampered, and the errors of Decode
// follow.
func Open(key envelope.Key, h Header, sealed []byte) (Payload, error) {
	body, err := OpenEncoded(key, h, sealed)
	if err != nil {
		return nil, err
	}
	p, err := Decode(body)
	if err != nil {
		return nil, fmt.Errorf("record %d of host %s: %w", h.Index, h.Host, err)
	}
	return p, nil
}

// OpenEncoded opens a record sealed under header h with key and returns
// its payload as Encode wrote it (and a store's log keeps it), not
// decoded: what tells whether a record on the hub is the one a store
// holds, byte for byte. A record whose header says Signed must carry the
// signature of key's signing key over h and the sealed record
// (envelope.ErrUnsigned when it does not); one of a loom before signing
// (version 1 header) opens with the key alone.
func OpenEncoded(key envelope.Key, h Header, sealed []byte) ([]byte, error) {
	hb, err := h.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("open record: %w", err)
	}
	if h.Signed {
		if h.KeyID != key.ID() && len(sealed) > envelope.SignatureSize {
			// Sealed and signed with another key: the seal says which.
			sealed = sealed[envelope.SignatureSize:]
		} else if sealed, err = envelope.VerifySigned(key.VerifyingKey(), RecordDomain, hb, sealed); err != nil {
			return nil, fmt.Errorf("open record %d of host %s: %w", h.Index, h.Host, err)
		}
	}
	body, err := envelope.Open(key, hb, sealed)
	if err != nil {
		return nil, fmt.Errorf("open record %d of host %s: %w", h.Index, h.Host, err)
	}
	return body, nil
}
