# Hark build, run and test. `make run` and `make test` set everything up
# themselves on Debian (as root, or with sudo) and on macOS (Homebrew).

SHELL      := /bin/bash
GO         ?= go
UNAME_S    := $(shell uname -s)
BIN        := build/bin/hark
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS    := -X hark/app.Version=$(VERSION)
GO_TAGS    := desktop,production
# WebKitGTK 2.40+ (Debian 12 ships 2.50) hands request bodies to the Wails
# asset server, which uploads from the desktop window need.
ifeq ($(UNAME_S),Linux)
GO_TAGS    := $(GO_TAGS),webkit2_40
endif
BENCHTIME  ?= 500ms

# Debian packages the build and the tests need.
APT_PKGS := build-essential pkg-config git ca-certificates \
	libgtk-3-dev libwebkit2gtk-4.0-dev libopenblas-dev \
	chromium xvfb xauth xdotool imagemagick fonts-dejavu-core ffmpeg \
	python3-gi gir1.2-gtk-3.0
# The linux/arm64 test leg (test-arm64): a cross C compiler and libc for
# cgo, and qemu to run the binaries. Only x86-64 hosts run that leg.
ifeq ($(UNAME_S)/$(shell uname -m),Linux/x86_64)
APT_PKGS += qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross
endif

.PHONY: all setup setup-os setup-frontend frontend build run serve test test-go test-mlxc test-arm64 vet-darwin test-packaging test-e2e test-schema test-api test-desktop bench soak-transcribe fuzz lint clean

all: build

## setup: install system packages and frontend dependencies (idempotent)
setup: setup-os setup-frontend

setup-os:
ifeq ($(UNAME_S),Linux)
	@missing=$$(for p in $(APT_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	command -v node >/dev/null || missing="$$missing nodejs"; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
		echo "setup: installing $$missing"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "setup: system packages present"; fi
else ifeq ($(UNAME_S),Darwin)
	@command -v brew >/dev/null || { echo "setup: Homebrew is required (https://brew.sh)"; exit 1; }
	@brew list mlx-c >/dev/null 2>&1 || brew install mlx-c
	@command -v node >/dev/null || brew install node
endif
	@command -v $(GO) >/dev/null || { echo "setup: Go 1.26 or newer is required (https://go.dev/dl)"; exit 1; }

# npm ci only when the lock file changed since the last install.
setup-frontend: frontend/node_modules/.hark-installed
frontend/node_modules/.hark-installed: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	@touch $@

## frontend: build the web UI into frontend/dist
frontend: setup-frontend
	cd frontend && npm run build

## build: the hark binary (Linux) or Hark.app (macOS)
# On macOS MLX goes into the bundle (build/darwin/bundle-mlx.sh): from
# Homebrew's mlx-c and mlx, or from MLXC_DIR=folder when given.
MLXC_DIR ?=
build: setup frontend
ifeq ($(UNAME_S),Darwin)
	$(GO) run github.com/wailsapp/wails/v2/cmd/wails@v2.11.0 build -tags "$(GO_TAGS)" -ldflags "$(LDFLAGS)" -s
	MLXC_DIR="$(MLXC_DIR)" build/darwin/bundle-mlx.sh build/bin/Hark.app
else
	$(GO) build -tags $(GO_TAGS) -ldflags "-w -s $(LDFLAGS)" -o $(BIN) .
endif

## run: set up, build and open the desktop app
run: build
ifeq ($(UNAME_S),Darwin)
	open build/bin/Hark.app
else
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ]; then echo "run: no display; open the UI in a browser with: $(BIN) serve"; exit 1; fi
	./$(BIN)
endif

## serve: build and serve the UI to a browser on localhost
serve: build
	./$(BIN) serve

## test: set up, build, then run every test (Go, linux/arm64 under qemu, browser e2e, desktop smoke)
test: build test-go test-arm64 test-packaging test-e2e test-schema test-api test-desktop

test-go: vet-darwin
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...
	@$(MAKE) --no-print-directory test-mlxc

## test-mlxc: the mlx, models and engine tests on the MLX backend (needs HARK_MLXC=/path/to/libmlxc)
test-mlxc:
ifeq ($(HARK_MLXC),)
	@echo "test-mlxc: skipped: HARK_MLXC is not set (point it at libmlxc.so/.dylib to run the tests on MLX)"
else
	HARK_BACKEND=mlxc $(GO) test -count=1 ./mlx/... ./models/... ./engine/...
endif

## test-arm64: the tests of mlx, models and engine cross-built for linux/arm64 (cgo, NEON kernels) and run under qemu
test-arm64: setup-os
	GO=$(GO) build/test-arm64.sh

## test-packaging: the macOS bundling script against stand-in tools (runs anywhere)
test-packaging:
	build/darwin/bundle-mlx_test.sh

## vet-darwin: go vet as darwin/arm64 from Linux (the pure-Go side: cgo needs the macOS SDK)
# Without cgo, mattn/go-sqlite3 does not build, so the packages that link
# the store (library, app, main) are left to a Mac's own go vet; a Mac runs
# the full vet in test-go anyway.
DARWIN_ENV := GOOS=darwin GOARCH=arm64 CGO_ENABLED=0
vet-darwin:
ifneq ($(UNAME_S),Darwin)
	@set -eo pipefail; pkgs=$$($(DARWIN_ENV) $(GO) list -f '{{.ImportPath}}{{range .Deps}}{{if eq . "github.com/mattn/go-sqlite3"}} sqlite{{end}}{{end}}' ./... | awk 'NF == 1'); \
	[ -n "$$pkgs" ] || { echo "vet-darwin: go list found no packages"; exit 1; }; \
	echo "vet-darwin: $$(echo $$pkgs | wc -w) packages without the SQLite store"; \
	$(DARWIN_ENV) $(GO) vet $$pkgs
endif

test-e2e:
	cd frontend && HARK_BIN=$(CURDIR)/$(BIN) npm run --silent check && HARK_BIN=$(CURDIR)/$(BIN) node --test --test-concurrency=1 e2e/

## test-schema: structured output from a random-weight model, validated by ajv (tests/schema; skips without ../shared)
test-schema:
	cd tests/schema && npm ci --no-audit --no-fund --silent && HARK_BIN=$(CURDIR)/$(BIN) node --test --test-concurrency=1 .

## test-api: the OpenAI-compatible /v1 API driven by the official openai npm client (pinned in apitest/package-lock.json)
test-api:
	cd apitest && npm ci --no-audit --no-fund --silent && HARK_BIN=$(CURDIR)/$(BIN) node --test --test-concurrency=1 ./

test-desktop:
ifeq ($(UNAME_S),Linux)
	HARK_DESKTOP_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -run 'Desktop' -v . 2>&1 | tail -n 40; exit $${PIPESTATUS[0]}
endif

## bench: run every benchmark and print one table
bench: setup
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./... 2>&1 | tee build/bench.txt | awk -f build/benchtable.awk

## soak-transcribe: 3 h of real speech through the file pipeline; peak RSS stays flat (FALLBACK=0: each window decoded once, minutes instead of hours)
# FALLBACK=0 turns the temperature fallback off: the shared model's random weights
# fail every quality check, so with it each window is decoded six times.
FALLBACK ?= 1
soak-transcribe:
	HARK_LONG_SPEECH=1 HARK_LONG_SPEECH_FALLBACK=$(FALLBACK) $(GO) test -count=1 -v -timeout 0 -run '^TestLongSpeechRSSFlat$$' ./engine/transcribe/

## fuzz: run every Fuzz target for FUZZTIME each (their seed corpora also run in make test)
FUZZTIME ?= 20s
# Minimising a new input defaults to 60s, longer than the whole run: a
# target that keeps finding large inputs (FuzzLoadJSON) spent its run
# minimising one. Bound it so the time goes to fuzzing.
FUZZMINIMIZETIME ?= 3s
# Go before 1.27 can fail a target with a bare "context deadline exceeded"
# when -fuzztime runs out while a worker is busy (golang/go#75804): no
# failing input, nothing wrong with the target. Only that exact outcome is
# let through; anything else, or a written failing input, stops the run.
fuzz:
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for f in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
		pkg=./$$(dirname $$f); \
		for fn in $$(grep -o '^func Fuzz[A-Za-z0-9_]*' $$f | cut -d' ' -f2); do \
			echo "== $$pkg $$fn"; \
			$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg 2>&1 | tee $$log; \
			[ $${PIPESTATUS[0]} = 0 ] && continue; \
			if grep -q 'Failing input written' $$log || ! grep -qx '    context deadline exceeded' $$log; then exit 1; fi; \
			echo "(not a failure: Go's own -fuzztime deadline race, golang/go#75804; no failing input)"; \
		done; \
	done

## lint: formatting and vet
lint: vet-darwin
	@bad=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags $(GO_TAGS) .

clean:
	rm -rf build/bin frontend/node_modules
	find frontend/dist -mindepth 1 ! -name .gitkeep -delete 2>/dev/null || true
