# `go build -o loom ./cmd/loom` is all a build needs (README). `make
# release` makes the binary to ship: static, without the symbol table and
# DWARF (-s -w), without the build machine's paths (-trimpath), stamped
# with the version, the commit and the commit's date, which `loom
# version` prints. The same commit gives the same binary. `make
# snapshot` makes the release's archives for Linux, macOS and Windows on
# amd64 and arm64, with their SBOMs, checksums signed with a throwaway
# key (or LOOM_SIGNING_KEY's), the Homebrew formula and the hub's image,
# in dist/, publishing nothing, and tests them as a user meets them
# (.ci/release-snapshot, .goreleaser.yaml, docs/release.md).

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
DATE    ?= $(shell TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null)
OUT     ?= dist/loom

LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)

.PHONY: build release snapshot
build:
	go build -o loom ./cmd/loom

release:
	CGO_ENABLED=0 go build -buildvcs=false -trimpath -ldflags "$(LDFLAGS)" -o $(OUT) ./cmd/loom
	@ls -l $(OUT)

snapshot:
	.ci/release-snapshot
