// Package envelope seals sync records on the user's machines so that the
// hub that stores and relays them sees only ciphertext, and opens them
// again with the user's sync key.
//
// # The key
//
// A sync key is 32 random bytes; it never leaves the user's machines but as
// text the user carries. Its text form is "loomkey1-" and 56 characters of
// lower-case base32 (RFC 4648's alphabet, a–z and 2–7, no padding) that
// encode the 32 key bytes and then 3 bytes of checksum, the key's CRC-24
// as OpenPGP's ASCII armor computes it, most significant byte first. Its id
// is the first 8 bytes of HMAC-SHA256 keyed with the key over "loom sync
// key id", in hex: public, and enough to tell keys apart.
//
// # A sealed record
//
// Each record gets a fresh random 32-byte content key. The payload is
// encrypted under the content key, and the content key under the sync key
// (wrapped, as Atuin does). Both use XChaCha20-Poly1305 from
// golang.org/x/crypto, and both authenticate the same additional data:
// bytes 0 to 8 of the sealed record (version and key id) followed by the
// record's header, which travels in the clear beside it. Byte by byte:
//
//	offset  length  field
//	0       1       format version, 1
//	1       8       key id: the sync key's id, raw
//	9       24      nonce of the wrapped content key, random
//	33      48      content key wrapped: 32 bytes XChaCha20-Poly1305 under
//	                the sync key with the nonce above, 16 bytes its tag
//	81      n+16    payload: n bytes XChaCha20-Poly1305 under the content
//	                key with an all-zero nonce, 16 bytes its tag
//
// Overhead is 97 bytes a record. The payload carries no nonce of its own:
// a nonce must never repeat under one key, and each content key seals one
// payload only (age seals its payloads the same way).
//
// # What the hub learns
//
// The hub can read, keep, drop, reorder, replay and alter what it is given.
// It sees each record's header, the sync key's id, the record's size (its
// plaintext's length plus 97) and when it arrives; it learns nothing of the
// content. It cannot alter a record, move it under another header or make
// one up without Open reporting ErrTampered. Noticing a record dropped or
// replayed whole is for the caller, from the headers, which are
// authenticated but not secret. Whoever has the sync key reads and writes
// every record: the key is the one secret.
package envelope
