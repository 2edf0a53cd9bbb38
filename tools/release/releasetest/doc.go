// Package releasetest tests a release as a user meets it: the snapshot
// that .ci/release-snapshot builds, served from a local directory and a
// local HTTP server, and each line of README.md's "Install and run" run
// as written where this machine can run it (docs/release.md says which
// is run and what stands in for the outside world). Its tests of the
// snapshot run only when LOOM_RELEASE_DIST names GoReleaser's dist
// directory and LOOM_RELEASE_KEY the public key that signed its
// checksums.txt; the first three below run without them:
//
//   - README.md's "Install and run" shows the one-line install, then
//     Homebrew, the hub's image, go install and the archives, each a
//     block of one line;
//   - the release key install.sh trusts has the fingerprint README.md
//     shows;
//   - README.md's go install line installs from a module proxy in a
//     directory serving the repository's HEAD as @latest, and the loom
//     it installs says that version;
//   - install.sh, run as README.md's one line gives it, installs loom
//     and checks the archive's checksum and checksums.txt's signature,
//     and refuses a tampered archive, a signature by another key, a
//     checksums.txt changed after signing and a missing signature;
//   - README.md's archive line checks and unpacks the archive;
//   - README.md's brew line names the tap and the formula the release
//     writes; the formula parses (ruby -c where Ruby is installed, a
//     structural check where it is not) and names the release's archives
//     with their checksums;
//   - the image of `loom serve` lists loom in its layer; README.md's run
//     line, run as written with podman (or a Docker daemon), starts a hub
//     that answers with the token it shows and keeps its home in the
//     volume; without either, its loom runs from the layer;
//   - each archive has a CycloneDX SBOM listing loom's modules.
package releasetest
