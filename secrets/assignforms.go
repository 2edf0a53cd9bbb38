package secrets

import (
	"strings"
)

// Values written in a form that says what they are, and that is no
// secret: hashes, UUIDs, versions and numbers.

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// timeUUID reports whether v is a UUID of version 1 (its time and the
// address of the host that made it).
func timeUUID(v string) bool {
	return uuidLike(v) && v[14] == '1'
}

func uuidLike(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := v[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// hashForm reports whether v is a hash written as such: an SRI hash
// (sha512-…), a Nix hash (sha256-…, sha256:…), a Go module hash (h1:…),
// a Docker digest (sha256:…).
func hashForm(v string) bool {
	l := strings.ToLower(v)
	for _, p := range []string{"sha1-", "sha256-", "sha384-", "sha512-", "sha1:", "sha256:", "sha384:", "sha512:", "md5-", "md5:", "h1:", "blake2b-", "blake3:", "xxh64:",
		"$2a$", "$2b$", "$2y$", "$argon2", "$scrypt$", "$pbkdf2", "$1$", "$5$", "$6$", "$apr1$", "{ssha}", "{sha}", "{bcrypt}"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// versionLike reports whether v is a package's version or where to get
// it (^4.17.21, npm:^9.0.2, workspace:*, git+https://…): what a lockfile
// or a manifest gives a package whose name ends in token (jsonwebtoken).
// artifactVersion reports whether v is a package's name and version
// (jjwt-jackson-0.11.2 of io.jsonwebtoken:jjwt-jackson-0.11.2, a Maven
// coordinate): words joined by dashes, then a dash and a version.
func artifactVersion(v string) bool {
	i := strings.LastIndexByte(v, '-')
	if i <= 0 || !versionLike(v[i+1:]) {
		return false
	}
	for _, w := range strings.Split(v[:i], "-") {
		if len(w) < 2 || strings.ToLower(w) != w || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			return false
		}
	}
	return true
}

func versionLike(v string) bool {
	l := strings.ToLower(v)
	for _, p := range []string{"npm:", "workspace:", "link:", "portal:", "patch:", "github:", "git+", "git:", "catalog:", "jsr:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	l = strings.TrimLeft(l, "^~<>=v ")
	if l == "" || l[0] < '0' || l[0] > '9' {
		return false
	}
	for i := 0; i < len(l); i++ {
		if c := l[i]; !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'x' || c == '*' || c >= 'a' && c <= 'z' && i > 0 && l[i-1] == '-') {
			return false
		}
	}
	return strings.Contains(l, ".")
}
