package envelope

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// KeySize is the length of a sync key in bytes.
const KeySize = 32

// keyPrefix starts a key's text form; its digit is the text form's version.
const keyPrefix = "loomkey1-"

// checksumSize is the length of the checksum the text form appends to the
// key: with it, 35 bytes make exactly 56 base32 characters, so no character
// carries unused bits and each key has one text form.
const checksumSize = 3

// keyTextLen is the number of characters after keyPrefix.
const keyTextLen = (KeySize + checksumSize) * 8 / 5

// idSize is the length of a key id in bytes; Key.ID gives it in hex.
const idSize = 8

// keyText is lower-case base32 (RFC 4648's alphabet: a–z, 2–7): no 0, 1 or
// 8 to mistake for o, l or b, and one case to type.
var keyText = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Errors of ParseKey. Each comes wrapped with what was wrong.
var (
	// ErrNotKey reports text that is not a sync key's text form at all.
	ErrNotKey = errors.New("not a loom sync key")
	// ErrMistypedKey reports text that looks like a sync key but has a
	// character wrong, missing or extra.
	ErrMistypedKey = errors.New("the key is mistyped")
)

// Key is a user's sync key: the one secret that seals and opens every
// record the user syncs. Its zero value is no key, which Seal and Open
// refuse.
type Key struct {
	b  [KeySize]byte
	id [idSize]byte // computed once: Seal and Open write and check it on every record
	// sign is the private key's seed and public key of SigningKey,
	// computed once: a pull checks a signature on every record.
	sign [ed25519.PrivateKeySize]byte
}

// NewKey returns a new sync key of KeySize random bytes from crypto/rand.
func NewKey() (Key, error) {
	var b [KeySize]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		return Key{}, fmt.Errorf("new sync key: %w", err)
	}
	return newKey(b), nil
}

func newKey(b [KeySize]byte) Key {
	k := Key{b: b}
	m := hmac.New(sha256.New, b[:])
	m.Write([]byte("loom sync key id"))
	copy(k.id[:], m.Sum(nil))
	copy(k.sign[:], signingKey(b))
	return k
}

func (k Key) isZero() bool { return k.b == [KeySize]byte{} }

// MAC returns HMAC-SHA256 keyed with the key over msg: a value only the
// key's holders can make, which tells nothing of the key or of msg (a
// team's session tags).
func (k Key) MAC(msg []byte) []byte {
	m := hmac.New(sha256.New, k.b[:])
	m.Write(msg)
	return m.Sum(nil)
}

// ID returns the key's public fingerprint, 16 hex digits: the first 8
// bytes of HMAC-SHA256 keyed with the key over "loom sync key id". It is
// safe to show and to store beside sealed records, and tells which key
// sealed them without revealing the key. It is "" for the zero Key.
func (k Key) ID() string {
	if k.isZero() {
		return ""
	}
	return hex.EncodeToString(k.id[:])
}

// Text returns the key's text form, the secret to carry to another
// machine: "loomkey1-" and 56 characters of lower-case base32 that encode
// the key and a CRC-24 of it. It is "" for the zero Key.
func (k Key) Text() string {
	if k.isZero() {
		return ""
	}
	var b [KeySize + checksumSize]byte
	copy(b[:], k.b[:])
	c := crc24(k.b[:])
	b[KeySize], b[KeySize+1], b[KeySize+2] = byte(c>>16), byte(c>>8), byte(c)
	return keyPrefix + keyText.EncodeToString(b[:])
}

// String returns "sync key " and the key's ID, never the key itself, so a
// key printed by mistake (in a log line, an error, a %v) gives nothing
// away. Text gives the key.
func (k Key) String() string {
	if k.isZero() {
		return "no sync key"
	}
	return "sync key " + k.ID()
}

// GoString is String, so that %#v does not print the key's bytes either.
func (k Key) GoString() string { return k.String() }

// ParseKey reads a key's text form as Text writes it. Surrounding
// whitespace and upper case are accepted. Text that does not start with
// "loomkey1-" gives ErrNotKey; a wrong character, a wrong length or a
// checksum that does not match gives ErrMistypedKey. The checksum is a
// CRC-24, which catches every single mistyped character and every two
// neighbours swapped, so a typo is reported as one, never as a wrong key.
func ParseKey(s string) (Key, error) {
	s = strings.TrimSpace(s)
	if len(s) < len(keyPrefix) || !strings.EqualFold(s[:len(keyPrefix)], keyPrefix) {
		return Key{}, fmt.Errorf("%w: a sync key starts with %q", ErrNotKey, keyPrefix)
	}
	body := s[len(keyPrefix):]
	for i, r := range body {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '2' <= r && r <= '7') {
			// Counted in characters from the key's start, as a reader counts.
			pos := utf8.RuneCountInString(s[:len(keyPrefix)+i]) + 1
			return Key{}, fmt.Errorf("%w: character %d, %q, is not one of a–z and 2–7", ErrMistypedKey, pos, r)
		}
	}
	body = strings.ToLower(body)
	if len(body) != keyTextLen {
		return Key{}, fmt.Errorf("%w: it has %d characters after %q, and a key has %d", ErrMistypedKey, len(body), keyPrefix, keyTextLen)
	}
	var b [KeySize + checksumSize]byte
	if n, err := keyText.Decode(b[:], []byte(body)); err != nil || n != len(b) {
		// Unreachable after the checks above; kept so that a change to them
		// cannot turn into a silent wrong key.
		return Key{}, fmt.Errorf("%w: it does not decode", ErrMistypedKey)
	}
	c := crc24(b[:KeySize])
	if b[KeySize] != byte(c>>16) || b[KeySize+1] != byte(c>>8) || b[KeySize+2] != byte(c) {
		return Key{}, fmt.Errorf("%w: its checksum does not match", ErrMistypedKey)
	}
	k := newKey([KeySize]byte(b[:KeySize]))
	if k.isZero() {
		return Key{}, fmt.Errorf("%w: it is all zeros, which no loom makes", ErrNotKey)
	}
	return k, nil
}

// crc24 is the CRC-24 of OpenPGP's ASCII armor (RFC 4880, section 6.1).
// A CRC of degree 24 detects every error confined to 24 consecutive bits;
// one base32 character is 5 bits, two neighbours 10.
func crc24(b []byte) uint32 {
	const (
		init = 0xb704ce
		poly = 0x1864cfb
	)
	crc := uint32(init)
	for _, c := range b {
		crc ^= uint32(c) << 16
		for range 8 {
			crc <<= 1
			if crc&0x1000000 != 0 {
				crc ^= poly
			}
		}
	}
	return crc & 0xffffff
}
