#!/usr/bin/env bash
# The linux/arm64 test leg: cross-build the Go tests of the compute
# packages with cgo and run them under qemu-user, so the NEON kernels
# (*_arm64.c) that a Mac's CPU path also uses are tested on an amd64 host.
#
# Usage: build/test-arm64.sh [PACKAGE_PATTERN...]   (default: mlx, models, engine)
# Env:   GO (go), CC_ARM64 (aarch64-linux-gnu-gcc), QEMU (qemu-aarch64-static),
#        ARM64_TIMEOUT per package (30m: engine takes minutes under qemu on
#        a quiet machine, and ran past 20m on a busy one), ARM64_RUN (a
#        -test.run pattern).
#
# The binaries link no system BLAS (tag noblas; see
# mlx/kernels/blas_none_linux.go), only the cross libc, found through
# QEMU_LD_PREFIX. They run with -test.short from their package's folder, so
# ../shared/assets resolves as it does for go test.
set -euo pipefail

GO=${GO:-go}
CC_ARM64=${CC_ARM64:-aarch64-linux-gnu-gcc}
QEMU=${QEMU:-qemu-aarch64-static}
ARM64_TIMEOUT=${ARM64_TIMEOUT:-30m}
[ $# -gt 0 ] || set -- ./mlx/... ./models/... ./engine/...

host="$(uname -s)/$(uname -m)"
if [ "$host" != Linux/x86_64 ]; then
	echo "test-arm64: skipped: the emulated leg runs on Linux/x86_64 hosts (this is $host)"
	exit 0
fi
for tool in "$CC_ARM64" "$QEMU"; do
	command -v "$tool" >/dev/null || { echo "test-arm64: $tool not found (make setup installs it)"; exit 1; }
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

export GOOS=linux GOARCH=arm64 CGO_ENABLED=1 CC=$CC_ARM64 GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=noblas"
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}

# One line per package with tests: import path, then folder.
pkgs=$("$GO" list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "$@")
[ -n "$pkgs" ] || { echo "test-arm64: no packages with tests in $*"; exit 1; }

start=$SECONDS
echo "test-arm64: cross-building $(wc -l <<<"$pkgs") test binaries"
while read -r ip _; do
	"$GO" test -c -o "$out/${ip//\//_}.test" "$ip"
done <<<"$pkgs"
echo "test-arm64: built in $((SECONDS - start))s"

# emulation_skip PKG: a -test.skip pattern for tests that emulation cannot
# afford, each for a stated reason.
emulation_skip() {
	case $1 in
	hark/engine/transcribe)
		# Whole-file transcriptions run the float32 Whisper encoder on full
		# 30 s windows; under noblas its products take the portable Go
		# Sgemm (Accelerate on a Mac), which qemu runs 30-50x slower than
		# native: 3 minutes here become more than 30. The arm64 code they
		# reach is covered by mlx/kernels and the models/whisper goldens,
		# and the pipeline logic is architecture-neutral Go tested natively.
		# The same holds for the later whole-file runs: word timing against
		# OpenAI's goldens, VAD before Whisper, and resuming a file from its
		# checkpoint (each 5-13 s natively, so well over 5 minutes here).
		echo '^(TestTranscribeMatchesOpenAI|TestTranscribeFileMatchesInMemory|TestTranscribeFileMemoryFlat|TestTemperatureFallback|TestSilenceAndNoise|TestWordTimestamps|TestBeamSearch|TestCancelStopsTranscription|TestWordTimestampsMatchOpenAI|TestAlignmentCostMatchesOpenAI|TestVADWordsWithOnSegment|TestVADSilenceThenSpeech|TestResumeFromCheckpoint)$'
		;;
	hark/mlx/mlxc)
		# The loader tests build stand-in libraries with the host's gcc
		# (x86-64, which an arm64 process cannot dlopen) and re-run the
		# test binary in a child, which needs binfmt_misc for qemu. No
		# libmlxc exists for arm64 here anyway; they run natively.
		echo '^(TestLoaderErrors|TestSelectFallback)$'
		;;
	hark/models/chattemplate)
		# The loop-limit case renders 10^7 loop steps, which emulation
		# slows past the 10 s wall-time limit, so the time limit trips
		# first: a correct answer for a slower machine, tested natively.
		echo '^TestSandboxLimits$/^loop$'
		;;
	esac
}

failed=()
while read -r ip dir; do
	t0=$SECONDS
	args=(-test.short -test.timeout "$ARM64_TIMEOUT")
	[ -z "${ARM64_RUN:-}" ] || args+=(-test.run "$ARM64_RUN")
	skip=$(emulation_skip "$ip")
	if [ -n "$skip" ]; then
		args+=(-test.skip "$skip")
		echo "skip $ip: $skip (emulation limits; see build/test-arm64.sh)"
	fi
	if log=$(cd "$dir" && "$QEMU" "$out/${ip//\//_}.test" "${args[@]}" 2>&1); then
		echo "ok   $ip (arm64, $((SECONDS - t0))s)"
	else
		echo "$log" | tail -n 60
		echo "FAIL $ip (arm64, $((SECONDS - t0))s)"
		failed+=("$ip")
	fi
done <<<"$pkgs"

n=$(wc -l <<<"$pkgs")
if [ ${#failed[@]} -gt 0 ]; then
	echo "test-arm64: ${#failed[@]} of $n packages failed under emulation: ${failed[*]}"
	exit 1
fi
echo "test-arm64: all $n packages passed under emulation in $((SECONDS - start))s"
