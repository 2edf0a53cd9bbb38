#!/bin/sh
# Installs loom from a release, without root (docs/release.md):
#
#   curl -fsSL https://raw.githubusercontent.com/loomhq/loom/main/install.sh | sh
#
# It picks the archive of this system and processor from the release's
# checksums.txt, checks checksums.txt's signature with the release key
# below (ssh-keygen -Y verify), checks the archive's SHA-256 against it,
# and only then puts loom in ~/.local/bin. Anything that does not verify
# stops it with one line and a non-zero exit, and nothing is installed.
#
#   LOOM_VERSION=1.2.3      that release rather than the latest
#   LOOM_INSTALL_DIR=DIR    where loom goes (default ~/.local/bin)
#   LOOM_INSTALL_BASE=URL   where the release's files are: an https://,
#                           http:// or file:// address, or a directory
#   LOOM_INSTALL_KEY=FILE   the public key that signs checksums.txt
#                           (default: the release key below)
set -eu

# The release key (ed25519). Its fingerprint, which README.md shows, is
# SHA256:pCUOT4z2yBw8ipKS6mtLbieTN7CFXvmZ8Q/EQymbMWg
release_key='ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA5ZafsGUM7mtxUYPygypAvfyR3DIJlKBw0+a+t0KwQk'

fail() {
  echo "loom install: $*" >&2
  exit 1
}

# The system and processor, named as the archives name them.
os="$(uname -s)"
case "$os" in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) fail "no archive for $os here: on Windows take the zip from https://github.com/loomhq/loom/releases" ;;
esac
arch="$(uname -m)"
case "$arch" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) fail "no archive for $arch processors: loom is built for amd64 and arm64" ;;
esac
# A shell under Rosetta says x86_64 on Apple silicon: take the native one.
if [ "$os" = darwin ] && [ "$arch" = amd64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
  arch=arm64
fi

if [ -n "${LOOM_INSTALL_BASE:-}" ]; then
  base="${LOOM_INSTALL_BASE%/}"
elif [ -n "${LOOM_VERSION:-}" ]; then
  base="https://github.com/loomhq/loom/releases/download/v${LOOM_VERSION#v}"
else
  base="https://github.com/loomhq/loom/releases/latest/download"
fi
dir="${LOOM_INSTALL_DIR:-${HOME:?}/.local/bin}"

tmp="$(mktemp -d 2>/dev/null || mktemp -d -t loom)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

# fetch NAME: the release's file NAME into $tmp.
fetch() {
  case "$base" in
  *://*)
    # One line, curl's reason in it.
    if command -v curl >/dev/null 2>&1; then
      why="$(curl -fsSL --proto '=https,http,file' -o "$tmp/$1" "$base/$1" 2>&1)" ||
        fail "cannot download $base/$1 ($(printf '%s\n' "$why" | tail -n 1))"
    elif command -v wget >/dev/null 2>&1; then
      wget -q -O "$tmp/$1" "$base/$1" || fail "cannot download $base/$1 (wget failed)"
    else
      fail "cannot download $base/$1: neither curl nor wget is installed"
    fi
    ;;
  *) cp "$base/$1" "$tmp/$1" 2>/dev/null || fail "cannot read $base/$1" ;;
  esac
}

fetch checksums.txt
fetch checksums.txt.sig

# The signature first: a checksums.txt the release key did not sign says
# nothing about the archive.
command -v ssh-keygen >/dev/null 2>&1 ||
  fail "cannot check the release's signature: ssh-keygen (OpenSSH 8.1 or newer) is not installed"
if [ -n "${LOOM_INSTALL_KEY:-}" ]; then
  key="$(cat "$LOOM_INSTALL_KEY")" || fail "cannot read the key $LOOM_INSTALL_KEY"
else
  key="$release_key"
fi
printf 'loom-release namespaces="file" %s\n' "$key" >"$tmp/allowed_signers"
ssh-keygen -Y verify -f "$tmp/allowed_signers" -I loom-release -n file \
  -s "$tmp/checksums.txt.sig" <"$tmp/checksums.txt" >/dev/null 2>&1 ||
  fail "checksums.txt from $base is not signed by the release key: nothing installed"

# This system's archive, as checksums.txt names it.
line="$(grep -E "^[0-9a-f]{64}  loom_[A-Za-z0-9.+-]*_${os}_${arch}\.tar\.gz\$" "$tmp/checksums.txt" | head -n 1)"
[ -n "$line" ] || fail "the release at $base has no archive for ${os}/${arch}"
want="${line%% *}"
archive="${line##* }"
fetch "$archive"

if command -v sha256sum >/dev/null 2>&1; then
  got="$(sha256sum "$tmp/$archive")"
elif command -v shasum >/dev/null 2>&1; then
  got="$(shasum -a 256 "$tmp/$archive")"
else
  got="$(openssl dgst -sha256 -r "$tmp/$archive")" || fail "cannot compute a SHA-256: no sha256sum, shasum or openssl"
fi
got="${got%% *}"
[ "$got" = "$want" ] ||
  fail "$archive does not match the release's checksum (sha256 $got, signed $want): nothing installed"

mkdir -p "$tmp/x"
tar -xzf "$tmp/$archive" -C "$tmp/x" loom || fail "cannot unpack $archive"
mkdir -p "$dir" || fail "cannot create $dir"
# Into place in one step: a loom that is running keeps its file.
cp "$tmp/x/loom" "$dir/.loom.new" && chmod 755 "$dir/.loom.new" && mv -f "$dir/.loom.new" "$dir/loom" ||
  fail "cannot write $dir/loom"

version="${archive#loom_}"
version="${version%_"${os}"_"${arch}".tar.gz}"
echo "loom $version installed in $dir/loom (checksum and signature verified)"
case ":${PATH:-}:" in
*":$dir:"*) ;;
*) echo "$dir is not on your PATH: add it, e.g. export PATH=\"$dir:\$PATH\"" ;;
esac
