package holdout_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"math/rand/v2"
	"strings"

	"golang.org/x/crypto/ssh"
)

// keyPool holds real keys made once (RSA is slow on two cores), from a
// fixed seed.
type keyPool struct {
	rsa []*rsa.PrivateKey
	ec  []*ecdsa.PrivateKey
	ed  []ed25519.PrivateKey
}

type seededReader struct{ r *rand.ChaCha8 }

func (s seededReader) Read(p []byte) (int, error) { return s.r.Read(p) }

func newKeyPool() *keyPool {
	var seed [32]byte
	copy(seed[:], "holdout-keys-holdout-keys-holdou")
	rd := seededReader{rand.NewChaCha8(seed)}
	kp := &keyPool{}
	for i := 0; i < 4; i++ {
		k, err := rsa.GenerateKey(rd, []int{2048, 2048, 3072, 1024}[i])
		if err != nil {
			panic(err)
		}
		kp.rsa = append(kp.rsa, k)
	}
	for i := 0; i < 4; i++ {
		c := []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P256(), elliptic.P521()}[i]
		k, err := ecdsa.GenerateKey(c, rd)
		if err != nil {
			panic(err)
		}
		kp.ec = append(kp.ec, k)
		_, ed, _ := ed25519.GenerateKey(rd)
		kp.ed = append(kp.ed, ed)
	}
	return kp
}

// wrap64 cuts s into lines of n characters, as PEM writes base64.
func wrap64(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

// privateKey returns a key block of some kind and a label for it.
func (kp *keyPool) privateKey(r *rng) (string, string) {
	switch r.IntN(10) {
	case 0:
		k := kp.rsa[r.IntN(len(kp.rsa))]
		return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})), "rsa-pkcs1"
	case 1:
		k := kp.rsa[r.IntN(len(kp.rsa))]
		der, _ := x509.MarshalPKCS8PrivateKey(k)
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "pkcs8-rsa"
	case 2:
		k := kp.ec[r.IntN(len(kp.ec))]
		der, _ := x509.MarshalECPrivateKey(k)
		return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})), "ec"
	case 3:
		k := kp.ed[r.IntN(len(kp.ed))]
		b, _ := ssh.MarshalPrivateKey(k, "dev@laptop")
		return string(pem.EncodeToMemory(b)), "openssh-ed25519"
	case 4:
		k := kp.rsa[r.IntN(len(kp.rsa))]
		b, _ := ssh.MarshalPrivateKey(k, "")
		return string(pem.EncodeToMemory(b)), "openssh-rsa"
	case 5:
		k := kp.ec[r.IntN(len(kp.ec))]
		der, _ := x509.MarshalPKCS8PrivateKey(k)
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "pkcs8-ec"
	case 6:
		body := "lQOYBF" + r.s(b64c, 1200)
		return "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + wrap64(body, 64) + "\n=" + r.s(b64c, 4) + "\n-----END PGP PRIVATE KEY BLOCK-----\n", "pgp"
	case 7:
		body := "MIIBuwIBAAKBgQ" + r.s(b64c, 580)
		return "-----BEGIN DSA PRIVATE KEY-----\n" + wrap64(body, 64) + "\n-----END DSA PRIVATE KEY-----\n", "dsa"
	case 8:
		body := "MIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQwwDgQI" + r.s(b64c, 1200)
		return "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + wrap64(body, 64) + "\n-----END ENCRYPTED PRIVATE KEY-----\n", "pkcs8-encrypted"
	default:
		pub := "AAAAC3NzaC1lZDI1NTE5AAAAI" + r.s(b64c, 43)
		priv := "AAAAI" + r.s(b64c, 43)
		return "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240611\nPublic-Lines: 2\n" + wrap64(pub, 64) +
			"\nPrivate-Lines: 1\n" + priv + "\nPrivate-MAC: " + r.hex(64) + "\n", "putty"
	}
}

// keySecret makes a sec of a key block; cut keeps only its first lines,
// as a truncated output shows it.
func keySecret(block string, cut bool, r *rng) (string, sec) {
	if cut {
		lines := strings.Split(block, "\n")
		n := r.between(3, min(8, len(lines)-1))
		block = strings.Join(lines[:n], "\n") + "\n"
	}
	var body []string
	public := false
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Public-Lines:") {
			public = true
		} else if strings.HasPrefix(l, "Private-Lines:") {
			public = false
		}
		if len(l) >= 20 && !public && !strings.HasPrefix(l, "-----") && !strings.Contains(l, ": ") {
			body = append(body, l)
		}
	}
	return block, sec{kind: "private-key", value: strings.Join(body, "\n"), lines: true}
}
