package synclog

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// Header is the part of a record the hub sees: who wrote it, where it
// stands in that host's log, its HLC, and which sync key sealed the rest.
// It says nothing of the record's content, not even its type.
type Header struct {
	// Host is the host that wrote the record.
	Host HostID
	// Index numbers a host's records 1, 2, 3 … without gaps, in the
	// order the host wrote them, which is the order every host applies
	// them in. A gap is a record lost on the way.
	Index int64
	// HLC is the reading of the host's clock when it wrote the record:
	// the stamp of every change the record makes, with Host.
	HLC HLC
	// KeyID is the id of the sync key the payload is sealed with
	// (envelope.Key.ID), 16 hex digits.
	KeyID string
	// Signed says that the body is signed with the key's signing key
	// (envelope.Key.SigningKey) as well as sealed: the signature, then
	// the sealed record. A loom before signing wrote none; its header is
	// of version 1, a signed record's of SignedHeaderVersion.
	Signed bool
}

// HeaderVersion is the version of the header's binary form of a record
// sealed and not signed, as a loom before signing wrote them.
const HeaderVersion = 1

// SignedHeaderVersion is the version of the header's binary form of a
// signed record: the same fields.
const SignedHeaderVersion = 2

// HeaderSize is the length of a header's binary form: 1 byte version, 16
// host id, 8 index, 8 HLC, 8 key id, integers big-endian.
const HeaderSize = 1 + 16 + 8 + 8 + 8

// ErrBadHeader reports a header's binary form that is not one.
var ErrBadHeader = errors.New("bad record header")

// Stamp returns the stamp of the changes the record makes.
func (h Header) Stamp() Stamp { return Stamp{HLC: h.HLC, Host: h.Host} }

// Validate checks that every field is set and well formed.
func (h Header) Validate() error {
	if err := h.Host.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadHeader, err)
	}
	if h.Index < 1 {
		return fmt.Errorf("%w: index %d (a host's records are numbered from 1)", ErrBadHeader, h.Index)
	}
	if b, err := hex.DecodeString(h.KeyID); err != nil || len(b) != 8 || hex.EncodeToString(b) != h.KeyID {
		return fmt.Errorf("%w: key id %q is not 16 lower-case hex digits", ErrBadHeader, h.KeyID)
	}
	return nil
}

// AppendBinary appends the header's binary form to b. It is what the
// hub stores and serves beside the sealed payload, and what the seal
// authenticates, so a payload opens under its own header only.
func (h Header) AppendBinary(b []byte) ([]byte, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	host := uuid.MustParse(string(h.Host))
	v := byte(HeaderVersion)
	if h.Signed {
		v = SignedHeaderVersion
	}
	b = append(b, v)
	b = append(b, host[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(h.Index))
	b = binary.BigEndian.AppendUint64(b, uint64(h.HLC))
	return hex.AppendDecode(b, []byte(h.KeyID))
}

// MarshalBinary returns the header's binary form.
func (h Header) MarshalBinary() ([]byte, error) {
	return h.AppendBinary(make([]byte, 0, HeaderSize))
}

// UnmarshalBinary reads what MarshalBinary writes.
func (h *Header) UnmarshalBinary(b []byte) error {
	if len(b) != HeaderSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrBadHeader, len(b), HeaderSize)
	}
	if b[0] != HeaderVersion && b[0] != SignedHeaderVersion {
		return fmt.Errorf("%w: version %d, and this loom reads versions %d and %d; upgrade loom", ErrBadHeader, b[0], HeaderVersion, SignedHeaderVersion)
	}
	var out Header
	out.Signed = b[0] == SignedHeaderVersion
	out.Host = HostID(uuid.UUID(b[1:17]).String())
	out.Index = int64(binary.BigEndian.Uint64(b[17:25]))
	out.HLC = HLC(binary.BigEndian.Uint64(b[25:33]))
	out.KeyID = hex.EncodeToString(b[33:41])
	if err := out.Validate(); err != nil {
		return err
	}
	*h = out
	return nil
}

// String returns the header as one line, for logs and debugging.
func (h Header) String() string {
	signed := ""
	if h.Signed {
		signed = ", signed"
	}
	return fmt.Sprintf("host %s #%d at %s, key %s%s", h.Host, h.Index, h.HLC, h.KeyID, signed)
}

// LogRecord is a record of a host's own log as its store keeps it: its
// index and stamp, which make its header, and its payload as Encode
// wrote it.
type LogRecord struct {
	Index   int64
	HLC     HLC
	Payload []byte
	// Was holds the SHA-256 digests (DigestSize bytes each) of the
	// payloads the record had before `loom secrets redact` rewrote it
	// (Payload is then the redacted one): the hub may hold any of them,
	// sealed, since the record may have been pushed before each rewrite.
	Was []byte
}

// DigestSize is the size of each digest of LogRecord.Was.
const DigestSize = sha256.Size

// Holds reports whether payload, a record's payload as a hub holds it
// (opened), is this record: its payload byte for byte, or one it had
// before a redaction rewrote it (Was). A record a redaction rewrote is
// still the same record: the same change, with its secrets replaced.
func (r LogRecord) Holds(payload []byte) bool {
	if bytes.Equal(payload, r.Payload) {
		return true
	}
	if len(r.Was) == 0 {
		return false
	}
	d := sha256.Sum256(payload)
	for w := r.Was; len(w) >= DigestSize; w = w[DigestSize:] {
		if bytes.Equal(w[:DigestSize], d[:]) {
			return true
		}
	}
	return false
}
