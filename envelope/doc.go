// Package envelope holds the user's sync key: the one secret that seals
// sync records, made on one machine and carried to the others as text.
//
// A key is 32 random bytes. Its text form is "loomkey1-" and 56 characters
// of lower-case base32 (RFC 4648's alphabet, a–z and 2–7, no padding) that
// encode the 32 key bytes and then 3 bytes of checksum, the key's CRC-24
// as OpenPGP's ASCII armor computes it, most significant byte first. Its id
// is the first 8 bytes of HMAC-SHA256 keyed with the key over "loom sync
// key id", in hex: public, and enough to tell keys apart.
package envelope
