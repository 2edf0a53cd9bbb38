package envelope

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
)

// Records are sealed and signed on one path, personal and team alike:
// SealSigned seals a record bound to its header and signs the header and
// the sealed record with its writer's Ed25519 key; VerifySigned checks
// that signature, and Open opens the sealed record it covers. The body a hub
// keeps is the 64-byte signature, then the sealed record. A domain
// ("loom sync record 1\n", "loom team record 1\n") keeps a signature of
// one kind of record from passing for another's.

// SignatureSize is how many bytes a signed body starts with.
const SignatureSize = ed25519.SignatureSize

// ErrUnsigned reports a body that should carry its writer's signature
// and does not: too short to hold one, or signed by another key, or over
// another header or record.
var ErrUnsigned = errors.New("not signed by its writer's key")

// Signed returns what a record's signature covers: domain, the header's
// length and the header, then the sealed record.
func Signed(domain string, header, sealed []byte) []byte {
	b := make([]byte, 0, len(domain)+8+len(header)+len(sealed))
	b = append(b, domain...)
	b = fmt.Appendf(b, "%d\n", len(header))
	b = append(b, header...)
	return append(b, sealed...)
}

// SealSigned seals plaintext with key bound to header (Seal) and signs
// header and the sealed record with priv under domain: it returns the
// signature followed by the sealed record.
func SealSigned(key Key, priv ed25519.PrivateKey, domain string, header, plaintext []byte) ([]byte, error) {
	sealed, err := Seal(key, header, plaintext)
	if err != nil {
		return nil, err
	}
	return Sign(priv, domain, header, sealed), nil
}

// Sign returns sealed, a record sealed under header, signed by priv under
// domain: the signature, then sealed.
func Sign(priv ed25519.PrivateKey, domain string, header, sealed []byte) []byte {
	sig := ed25519.Sign(priv, Signed(domain, header, sealed))
	return append(sig, sealed...)
}

// VerifySigned checks that body, a signed record under header, is signed
// by pub under domain, and returns the sealed record it carries; a body
// that is not is ErrUnsigned.
func VerifySigned(pub ed25519.PublicKey, domain string, header, body []byte) ([]byte, error) {
	if len(body) < SignatureSize {
		return nil, fmt.Errorf("%w: %d bytes cannot hold a signature", ErrUnsigned, len(body))
	}
	sig, sealed := body[:SignatureSize], body[SignatureSize:]
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, Signed(domain, header, sealed), sig) {
		return nil, ErrUnsigned
	}
	return sealed, nil
}

// SigningKey returns the Ed25519 key that signs a user's own records:
// derived from the sync key (HMAC-SHA256 keyed with it over "loom sync
// signing key 1" is the seed), so every machine holding the key signs
// with it and checks with its public half, and nothing else is to be
// carried between machines. It is nil for the zero Key.
func (k Key) SigningKey() ed25519.PrivateKey {
	if k.isZero() {
		return nil
	}
	return ed25519.PrivateKey(k.sign[:])
}

// VerifyingKey returns the public half of SigningKey, nil for the zero
// Key.
func (k Key) VerifyingKey() ed25519.PublicKey {
	if k.isZero() {
		return nil
	}
	return ed25519.PublicKey(k.sign[ed25519.SeedSize:])
}

func signingKey(b [KeySize]byte) ed25519.PrivateKey {
	m := hmac.New(sha256.New, b[:])
	m.Write([]byte("loom sync signing key 1"))
	return ed25519.NewKeyFromSeed(m.Sum(nil))
}
