package share

import (
	"bytes"
	"compress/gzip"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"

	"github.com/loomhq/loom"
)

// A sealed share, byte by byte:
//
//	offset  length  field
//	0       1       format version, 1
//	1       12      AES-GCM nonce, random
//	13      n+16    the payload's JSON, gzipped, then AES-256-GCM under
//	                the share's key with the nonce above and additional
//	                data "loom share 1"; 16 bytes its tag
//
// The key is 32 random bytes made for this share alone, which travel
// only in the link's fragment (#k=, base64url without padding): a
// browser never sends a fragment, so the hub that keeps the blob never
// sees the key. The share page opens it with Web Crypto
// (crypto.subtle.decrypt with AES-GCM, then DecompressionStream).
const (
	sealVersion = 1
	nonceSize   = 12
	keySize     = 32
)

// aad is the additional data every sealed share authenticates.
var aad = []byte("loom share 1")

// Seal gzips and encrypts p under a fresh key, and returns the blob for
// the hub and the key as the link's fragment carries it.
func Seal(p *Payload) (blob []byte, key string, err error) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if err := json.NewEncoder(zw).Encode(p); err != nil {
		return nil, "", fmt.Errorf("seal the share: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, "", fmt.Errorf("seal the share: %w", err)
	}
	k := make([]byte, keySize)
	rand.Read(k)
	gcm, err := newGCM(k)
	if err != nil {
		return nil, "", err
	}
	blob = make([]byte, 1+nonceSize, 1+nonceSize+z.Len()+gcm.Overhead())
	blob[0] = sealVersion
	rand.Read(blob[1 : 1+nonceSize])
	blob = gcm.Seal(blob, blob[1:1+nonceSize], z.Bytes(), aad)
	return blob, base64.RawURLEncoding.EncodeToString(k), nil
}

// Open decrypts and reads a blob that Seal made, with its key: what the
// share page does in the browser.
func Open(blob []byte, key string) (*Payload, error) {
	k, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil || len(k) != keySize {
		return nil, loom.Errorf(loom.EINVALID, "the link's key is damaged: copy the whole link, with what follows #k=")
	}
	if len(blob) < 1+nonceSize+16 || blob[0] != sealVersion {
		return nil, loom.Errorf(loom.EINVALID, "not a sealed share of a version this loom reads")
	}
	gcm, err := newGCM(k)
	if err != nil {
		return nil, err
	}
	z, err := gcm.Open(nil, blob[1:1+nonceSize], blob[1+nonceSize:], aad)
	if err != nil {
		return nil, loom.Errorf(loom.EINVALID, "the share does not open with this key: the link is not whole, or the share was altered")
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("open the share: %w", err)
	}
	var p Payload
	if err := json.NewDecoder(io.LimitReader(zr, 1<<30)).Decode(&p); err != nil {
		return nil, fmt.Errorf("open the share: %w", err)
	}
	return &p, nil
}

func newGCM(k []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("share key: %w", err)
	}
	return cipher.NewGCM(b)
}
