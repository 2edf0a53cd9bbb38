// Package team is what a team of loom users shares through a hub that
// cannot read it: each member's key pair (Identity), the team's keys by
// epoch (Keyring) wrapped for each member, the signed, hash-chained log
// of membership changes that every client verifies (Entry, Verify), the
// invite codes, and the sealing and signing of the records members
// publish (SealRecord, OpenRecord). See docs/team.md.
package team

import (
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/internal/safefile"
)

// Member is the public part of a key pair: what the chain says of a
// member (or of an invite), and all anyone needs to wrap a key for it or
// check its signatures.
type Member struct {
	// Name is the member's name in the team (an invite's label).
	Name string `json:"name"`
	// User is the member's user on the hub, whose token reads the
	// team's records there ("" for an invite).
	User string `json:"user,omitempty"`
	// Box is the X25519 public key keys are wrapped to.
	Box []byte `json:"box"`
	// Sign is the Ed25519 public key that checks the member's
	// signatures; its Fingerprint names the member.
	Sign []byte `json:"sign"`
}

// Fingerprint names m: see Fingerprint.
func (m *Member) Fingerprint() string { return Fingerprint(m.Sign) }

// check refuses a Member whose keys are not keys.
func (m *Member) check() error {
	if len(m.Sign) != ed25519.PublicKeySize {
		return errors.New("a signing key of the wrong size")
	}
	if _, err := ecdh.X25519().NewPublicKey(m.Box); err != nil {
		return errors.New("a wrapping key of the wrong size")
	}
	if err := validName(m.Name); err != nil {
		return err
	}
	return nil
}

// validName checks a member's or a team's name: one short line of
// letters, digits and -_. , the part of a session key it becomes.
func validName(s string) error {
	if s == "" || len(s) > 64 {
		return errors.New("a name must have 1 to 64 characters")
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("name %q may hold only letters, digits, '-', '_' and '.'", s)
		}
	}
	return nil
}

// ValidName checks a team's or a member's name.
func ValidName(s string) error {
	if err := validName(s); err != nil {
		return loom.Errorf(loom.EINVALID, "%s", err.Error())
	}
	return nil
}

// Fingerprint is the name of a signing key: the first 16 bytes of its
// SHA-256, in hex, in groups of four ("3f2a 91c0 …"). It is what a
// member compares out of band, and what the chain names signers by.
func Fingerprint(sign []byte) string {
	sum := sha256.Sum256(sign)
	h := hex.EncodeToString(sum[:16])
	var b strings.Builder
	for i := 0; i < len(h); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(h[i : i+4])
	}
	return b.String()
}

// Identity is a key pair: a member's, kept on their machines, or an
// invite's, carried in its code.
type Identity struct {
	Box  *ecdh.PrivateKey
	Sign ed25519.PrivateKey
}

// NewIdentity makes a key pair from crypto/rand.
func NewIdentity() (*Identity, error) {
	box, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("new key pair: %w", err)
	}
	_, sign, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("new key pair: %w", err)
	}
	return &Identity{Box: box, Sign: sign}, nil
}

// Public returns the public part of id under name and hub user.
func (id *Identity) Public(name, user string) *Member {
	return &Member{Name: name, User: user, Box: id.Box.PublicKey().Bytes(), Sign: []byte(id.Sign.Public().(ed25519.PublicKey))}
}

// Fingerprint names id's signing key.
func (id *Identity) Fingerprint() string { return Fingerprint(id.Sign.Public().(ed25519.PublicKey)) }

// identityFile is how an Identity is kept: its two private keys' seeds.
type identityFile struct {
	Box  []byte `json:"box"`
	Sign []byte `json:"sign"`
}

// Marshal returns id's private keys as text to keep.
func (id *Identity) Marshal() []byte {
	b, _ := json.Marshal(identityFile{Box: id.Box.Bytes(), Sign: id.Sign.Seed()})
	return b
}

// ParseIdentity reads what Marshal wrote.
func ParseIdentity(b []byte) (*Identity, error) {
	var f identityFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("not a loom team key pair: %w", err)
	}
	box, err := ecdh.X25519().NewPrivateKey(f.Box)
	if err != nil {
		return nil, errors.New("not a loom team key pair: bad wrapping key")
	}
	if len(f.Sign) != ed25519.SeedSize {
		return nil, errors.New("not a loom team key pair: bad signing key")
	}
	return &Identity{Box: box, Sign: ed25519.NewKeyFromSeed(f.Sign)}, nil
}

// LoadIdentity reads the key pair kept at path, making and keeping a new
// one (mode 0600) when there is none.
func LoadIdentity(path string) (*Identity, bool, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		id, err := ParseIdentity(b)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return id, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	id, err := NewIdentity()
	if err != nil {
		return nil, false, err
	}
	if err := WriteSecret(path, id.Marshal()); err != nil {
		return nil, false, err
	}
	return id, true, nil
}

// WriteSecret writes b to path with mode 0600 through a temporary file
// and a rename, making its directory (0700).
func WriteSecret(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return safefile.WriteFile(path, b, 0o600)
}

// Keyring is the team's keys by epoch: epoch 1 from the team's
// creation, one more at each rotation.
type Keyring map[int]envelope.Key

// Latest returns the newest epoch and its key (0 when empty).
func (k Keyring) Latest() (int, envelope.Key) {
	e := 0
	for n := range k {
		if n > e {
			e = n
		}
	}
	return e, k[e]
}

// MarshalJSON keeps each key as its text.
func (k Keyring) MarshalJSON() ([]byte, error) {
	m := make(map[int]string, len(k))
	for e, key := range k {
		m[e] = key.Text()
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (k *Keyring) UnmarshalJSON(b []byte) error {
	var m map[int]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*k = make(Keyring, len(m))
	for e, s := range m {
		key, err := envelope.ParseKey(s)
		if err != nil {
			return fmt.Errorf("epoch %d: %w", e, err)
		}
		(*k)[e] = key
	}
	return nil
}

// Epochs returns the epochs k holds, oldest first.
func (k Keyring) Epochs() []int {
	out := make([]int, 0, len(k))
	for e := range k {
		out = append(out, e)
	}
	sort.Ints(out)
	return out
}

// wrapInfo binds a wrap to its purpose.
const wrapInfo = "loom team wrap 1"

// Wrap seals ring for the holder of box (an X25519 public key): a fresh
// X25519 key agrees a secret with it, HKDF-SHA256 makes the key of
// XChaCha20-Poly1305 from that secret. Layout: the fresh public key
// (32), the nonce (24), the sealed keyring.
func Wrap(ring Keyring, box []byte) ([]byte, error) {
	to, err := ecdh.X25519().NewPublicKey(box)
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	eph, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	aead, err := wrapAEAD(eph, to, eph.PublicKey().Bytes(), box)
	if err != nil {
		return nil, err
	}
	plain, err := json.Marshal(ring)
	if err != nil {
		return nil, err
	}
	out := append([]byte{}, eph.PublicKey().Bytes()...)
	nonce := make([]byte, chacha20poly1305.NonceSizeX)
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plain, box), nil
}

// Unwrap opens what Wrap sealed for id.
func Unwrap(wrapped []byte, id *Identity) (Keyring, error) {
	const head = 32 + chacha20poly1305.NonceSizeX
	if len(wrapped) < head+chacha20poly1305.Overhead {
		return nil, errors.New("unwrap: too short")
	}
	from, err := ecdh.X25519().NewPublicKey(wrapped[:32])
	if err != nil {
		return nil, fmt.Errorf("unwrap: %w", err)
	}
	aead, err := wrapAEAD(id.Box, from, wrapped[:32], id.Box.PublicKey().Bytes())
	if err != nil {
		return nil, err
	}
	plain, err := aead.Open(nil, wrapped[32:head], wrapped[head:], id.Box.PublicKey().Bytes())
	if err != nil {
		return nil, errors.New("unwrap: the keys were not wrapped for this key pair")
	}
	var ring Keyring
	if err := json.Unmarshal(plain, &ring); err != nil {
		return nil, fmt.Errorf("unwrap: %w", err)
	}
	return ring, nil
}

// wrapAEAD is the cipher of a wrap: X25519 between priv and pub, then
// HKDF-SHA256 salted with the fresh public key and the recipient's.
func wrapAEAD(priv *ecdh.PrivateKey, pub *ecdh.PublicKey, ephPub, recipient []byte) (cipher.AEAD, error) {
	shared, err := priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	salt := append(append([]byte{}, ephPub...), recipient...)
	key, err := hkdf.Key(sha256.New, shared, salt, wrapInfo, chacha20poly1305.KeySize)
	if err != nil {
		return nil, err
	}
	return chacha20poly1305.NewX(key)
}
