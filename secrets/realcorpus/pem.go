package realcorpus

import (
	"strings"
)

// pemBody returns base64 text of n bytes as PEM lays it out, 64
// characters a line, starting with prefix: the fixed DER header every
// key of that type and size begins with, so that the first line reads
// as a real key's does.
func (g *Gen) pemBody(prefix string, n int) []string {
	chars := (n + 2) / 3 * 4
	pad := ""
	switch n % 3 {
	case 1:
		pad = "=="
	case 2:
		pad = "="
	}
	s := prefix + g.S(b64, chars-len(prefix)-len(pad)) + pad
	var lines []string
	for len(s) > 64 {
		lines = append(lines, s[:64])
		s = s[64:]
	}
	return append(lines, s)
}

func pemBlock(label string, headers []string, body []string) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "-----\n")
	for _, h := range headers {
		b.WriteString(h + "\n")
	}
	if len(headers) > 0 {
		b.WriteString("\n")
	}
	for _, l := range body {
		b.WriteString(l + "\n")
	}
	b.WriteString("-----END " + label + "-----")
	return b.String()
}

// RSAKey returns an RSA private key in PKCS#1 PEM.
func (g *Gen) RSAKey() string {
	if g.Chance(0.5) {
		return pemBlock("RSA PRIVATE KEY", nil, g.pemBody("MIIEpAIBAAKCAQEA", 1192))
	}
	return pemBlock("RSA PRIVATE KEY", nil, g.pemBody("MIIJKAIBAAKCAgEA", 2344))
}

// PKCS8Key returns an unencrypted PKCS#8 private key (RSA, EC or
// Ed25519).
func (g *Gen) PKCS8Key() string {
	switch g.r.IntN(3) {
	case 0:
		return pemBlock("PRIVATE KEY", nil, g.pemBody("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1217))
	case 1:
		return pemBlock("PRIVATE KEY", nil, g.pemBody("MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg", 138))
	default:
		return pemBlock("PRIVATE KEY", nil, g.pemBody("MC4CAQAwBQYDK2VwBCIEI", 48))
	}
}

// ECKey returns a P-256 key in SEC 1 PEM.
func (g *Gen) ECKey() string {
	return pemBlock("EC PRIVATE KEY", nil, g.pemBody("MHcCAQEEI", 121))
}

// OpenSSHKey returns a key in OpenSSH's own format (Ed25519 or RSA).
func (g *Gen) OpenSSHKey() string {
	var body []string
	if g.Chance(0.6) {
		body = g.pemBody("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", 399)
	} else {
		body = g.pemBody("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn", 1811)
	}
	// OpenSSH lays its base64 out 70 characters a line.
	s := strings.Join(body, "")
	var lines []string
	for len(s) > 70 {
		lines = append(lines, s[:70])
		s = s[70:]
	}
	lines = append(lines, s)
	return pemBlock("OPENSSH PRIVATE KEY", nil, lines)
}

// PGPKey returns an armoured PGP secret key block.
func (g *Gen) PGPKey() string {
	body := g.pemBody("lQOYBG", 1400)
	body = append(body, "="+g.S(b64, 4))
	return pemBlock("PGP PRIVATE KEY BLOCK", []string{"Comment: " + g.Pick("GPGTools - https://gpgtools.org", "Hostname: build-01", "User-ID:\tRelease Signing")}, body)
}

// EncryptedKey returns a private key encrypted with a passphrase: PKCS#8
// ENCRYPTED PRIVATE KEY, or the legacy OpenSSL Proc-Type form.
func (g *Gen) EncryptedKey() string {
	if g.Chance(0.5) {
		return pemBlock("ENCRYPTED PRIVATE KEY", nil, g.pemBody("MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI", 1312))
	}
	return pemBlock("RSA PRIVATE KEY", []string{"Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC," + g.S(hexUp, 32)}, g.pemBody("", 1200))
}

// CutKey returns the start of a key as a truncated output shows it: the
// BEGIN line and some of the body, no END line.
func (g *Gen) CutKey() string {
	var k string
	switch g.r.IntN(4) {
	case 0:
		k = g.RSAKey()
	case 1:
		k = g.PKCS8Key()
	case 2:
		k = g.OpenSSHKey()
	default:
		k = g.PGPKey()
	}
	lines := strings.Split(k, "\n")
	body := 1
	for body < len(lines) && (lines[body] == "" || strings.Contains(lines[body], ": ")) {
		body++
	}
	n := min(len(lines)-1, body+g.N(2, 7))
	return strings.Join(lines[:n], "\n")
}
