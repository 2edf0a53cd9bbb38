package envelope

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/chacha20poly1305"
)

// Version is the format version a sealed record starts with.
const Version = 1

// The layout of a sealed record, as offsets into it.
const (
	idOffset      = 1
	nonceOffset   = idOffset + idSize
	wrappedOffset = nonceOffset + chacha20poly1305.NonceSizeX
	payloadOffset = wrappedOffset + KeySize + chacha20poly1305.Overhead
)

// Overhead is how many bytes longer a sealed record is than its plaintext:
// 1 version, 8 key id, 24 nonce, 48 wrapped content key, 16 payload tag.
const Overhead = payloadOffset + chacha20poly1305.Overhead

// maxPlaintext is the most XChaCha20-Poly1305 seals in one message; its
// Seal and Open panic beyond it.
const maxPlaintext = 1<<38 - 64

// Errors of Open. Each comes wrapped with what was found.
var (
	// ErrWrongKey reports a record sealed with another sync key than the
	// one given: its message names both keys' ids.
	ErrWrongKey = errors.New("wrong sync key")
	// ErrTampered reports a record that does not open under its header:
	// it, or the header, was altered, truncated or damaged, or it is in a
	// format version this package does not know.
	ErrTampered = errors.New("the sealed record was altered or damaged")
)

var errNoKey = errors.New("no sync key: the Key is its zero value")

// payloadNonce is the payload's nonce. A fixed nonce is safe because the
// content key is fresh for every record and seals nothing else.
var payloadNonce [chacha20poly1305.NonceSizeX]byte

// Seal encrypts plaintext for the user who holds key, bound to header: the
// result opens only with the same key and the same header. header travels
// in the clear beside the sealed record; nil and empty are the same header.
// The result is len(plaintext)+Overhead bytes, and differs on every call.
func Seal(key Key, header, plaintext []byte) ([]byte, error) {
	return seal(key, header, plaintext, rand.Reader)
}

// seal is Seal with its randomness from random, which tests fix.
func seal(key Key, header, plaintext []byte, random io.Reader) ([]byte, error) {
	if key.isZero() {
		return nil, fmt.Errorf("seal: %w", errNoKey)
	}
	if uint64(len(plaintext)) > maxPlaintext {
		return nil, fmt.Errorf("seal: %d bytes is more than one record holds (%d)", len(plaintext), uint64(maxPlaintext))
	}
	sealed := make([]byte, payloadOffset, len(plaintext)+Overhead)
	sealed[0] = Version
	copy(sealed[idOffset:], key.id[:])
	var contentKey [KeySize]byte
	nonce := sealed[nonceOffset:wrappedOffset]
	if _, err := io.ReadFull(random, contentKey[:]); err != nil {
		return nil, fmt.Errorf("seal: content key: %w", err)
	}
	if _, err := io.ReadFull(random, nonce); err != nil {
		return nil, fmt.Errorf("seal: nonce: %w", err)
	}
	ad := additionalData(sealed[:nonceOffset], header)
	wrap, err := newAEAD(key.b[:])
	if err != nil {
		return nil, err
	}
	wrap.Seal(sealed[:wrappedOffset], nonce, contentKey[:], ad)
	payload, err := newAEAD(contentKey[:])
	if err != nil {
		return nil, err
	}
	return payload.Seal(sealed[:payloadOffset], payloadNonce[:], plaintext, ad), nil
}

// Open decrypts a record Seal sealed with key and header. A record sealed
// with another key gives ErrWrongKey; one that was altered, truncated or
// moved under another header gives ErrTampered. No input makes it panic.
func Open(key Key, header, sealed []byte) ([]byte, error) {
	if key.isZero() {
		return nil, fmt.Errorf("open: %w", errNoKey)
	}
	switch {
	case len(sealed) == 0:
		return nil, fmt.Errorf("%w: it is empty", ErrTampered)
	case sealed[0] != Version:
		return nil, fmt.Errorf("%w: its format version is %d, and this loom knows only version %d (a newer loom may have sealed it)", ErrTampered, sealed[0], Version)
	case len(sealed) < Overhead:
		return nil, fmt.Errorf("%w: it is %d bytes, and every sealed record has at least %d", ErrTampered, len(sealed), Overhead)
	case uint64(len(sealed)) > maxPlaintext+Overhead:
		return nil, fmt.Errorf("%w: it is %d bytes, more than any sealed record", ErrTampered, len(sealed))
	}
	wrap, err := newAEAD(key.b[:])
	if err != nil {
		return nil, err
	}
	nonce := sealed[nonceOffset:wrappedOffset]
	wrapped := sealed[wrappedOffset:payloadOffset]
	if id := sealed[idOffset:nonceOffset]; !bytes.Equal(id, key.id[:]) {
		// Another key sealed it, or its key id was altered: the wrapped
		// content key opens under this key's own id only in the second case.
		ad := additionalData(append([]byte{Version}, key.id[:]...), header)
		if _, err := wrap.Open(nil, nonce, wrapped, ad); err == nil {
			return nil, fmt.Errorf("%w: its key id was altered", ErrTampered)
		}
		return nil, fmt.Errorf("%w: the record was sealed with sync key %x; this machine's key is %s", ErrWrongKey, id, key.ID())
	}
	ad := additionalData(sealed[:nonceOffset], header)
	contentKey, err := wrap.Open(nil, nonce, wrapped, ad)
	if err != nil {
		return nil, fmt.Errorf("%w: its content key does not authenticate under this header", ErrTampered)
	}
	payload, err := newAEAD(contentKey)
	if err != nil {
		return nil, err
	}
	plaintext, err := payload.Open(nil, payloadNonce[:], sealed[payloadOffset:], ad)
	if err != nil {
		return nil, fmt.Errorf("%w: its payload does not authenticate under this header", ErrTampered)
	}
	return plaintext, nil
}

// additionalData is what both ciphers authenticate besides what they
// encrypt: the version and key id (prefix) and then the header. The AEAD
// authenticates its length, so the header needs no length of its own.
func additionalData(prefix, header []byte) []byte {
	ad := make([]byte, 0, len(prefix)+len(header))
	return append(append(ad, prefix...), header...)
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	a, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("xchacha20-poly1305: %w", err)
	}
	return a, nil
}
