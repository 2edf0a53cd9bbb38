// Package releasetest tests a release as a user meets it: the snapshot
// that .ci/release-snapshot builds, served from a local directory and a
// local HTTP server. Its tests run only when LOOM_RELEASE_DIST names
// GoReleaser's dist directory and LOOM_RELEASE_KEY the public key that
// signed its checksums.txt (docs/release.md), but for the first:
//
//   - the release key install.sh trusts has the fingerprint README.md
//     shows;
//   - install.sh, run as README.md's one line gives it, installs loom
//     and checks the archive's checksum and checksums.txt's signature,
//     and refuses a tampered archive, a signature by another key, a
//     checksums.txt changed after signing and a missing signature;
//   - the Homebrew formula parses (ruby -c where Ruby is installed, a
//     structural check where it is not) and names the release's archives
//     with their checksums;
//   - the image of `loom serve` lists loom in its layer, starts it as
//     the hub, and its loom runs (through docker or podman where one
//     runs, else from the layer);
//   - each archive has a CycloneDX SBOM listing loom's modules.
package releasetest
