#!/usr/bin/env bash
# Runs bundle-mlx.sh on any Unix against stand-ins for brew, otool,
# install_name_tool and codesign that log their calls, and checks what it
# copies and which edits it asks for. What the real tools do with those
# edits is only checked on a Mac (see README, "What only a Mac verifies").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Stand-in tools. otool answers from files named after the library, as the
# real one would for Homebrew's builds: libmlxc links libmlx by an absolute
# Cellar path and carries an rpath into Homebrew's lib.
mkdir -p "$work/bin"
for t in install_name_tool codesign; do
	# shellcheck disable=SC2016 # $* and $TOOL_LOG belong to the stand-in
	printf '#!/bin/sh\necho "%s $*" >>"$TOOL_LOG"\n' "$t" >"$work/bin/$t"
done
cat >"$work/bin/otool" <<'EOF'
#!/bin/sh
f=$2
case "$1 $(basename "$f")" in
"-L libmlxc.dylib") printf '%s:\n\t/opt/homebrew/opt/mlx-c/lib/libmlxc.dylib (compatibility version 0.0.0)\n\t/opt/homebrew/opt/mlx/lib/libmlx.0.31.2.dylib (compatibility version 0.0.0)\n\t/usr/lib/libc++.1.dylib (compatibility version 1.0.0)\n' "$f" ;;
"-l libmlxc.dylib") printf 'Load command 9\n          cmd LC_RPATH\n      cmdsize 32\n         path /opt/homebrew/lib (offset 12)\nLoad command 10\n          cmd LC_LOAD_DYLIB\n      cmdsize 56\n         name /usr/lib/libc++.1.dylib (offset 24)\n' ;;
"-l "*) printf 'Load command 1\n          cmd LC_LOAD_DYLIB\n      cmdsize 56\n         name /usr/lib/libSystem.B.dylib (offset 24)\n' ;;
*) printf '%s:\n' "$f" ;;
esac
EOF
cat >"$work/bin/brew" <<'EOF'
#!/bin/sh
[ "$1" = --prefix ] || exit 1
[ -d "$BREW_ROOT/opt/$2" ] || exit 1
echo "$BREW_ROOT/opt/$2"
EOF
chmod +x "$work/bin"/*

# new_app: an empty built bundle; prints its path.
new_app() {
	local app="$work/$1/Hark.app"
	mkdir -p "$app/Contents/MacOS"
	echo binary >"$app/Contents/MacOS/hark"
	echo "$app"
}

# A Homebrew layout: opt/ links to Cellar folders, lib files are links.
brew_root="$work/homebrew"
mkdir -p "$brew_root/Cellar/mlx-c/0.6.0/lib" "$brew_root/Cellar/mlx/0.31.2/lib" "$brew_root/opt"
echo mlxc >"$brew_root/Cellar/mlx-c/0.6.0/lib/libmlxc.0.6.0.dylib"
ln -s libmlxc.0.6.0.dylib "$brew_root/Cellar/mlx-c/0.6.0/lib/libmlxc.dylib"
echo mlx >"$brew_root/Cellar/mlx/0.31.2/lib/libmlx.0.31.2.dylib"
ln -s libmlx.0.31.2.dylib "$brew_root/Cellar/mlx/0.31.2/lib/libmlx.dylib"
echo metallib >"$brew_root/Cellar/mlx/0.31.2/lib/mlx.metallib"
ln -s ../Cellar/mlx-c/0.6.0 "$brew_root/opt/mlx-c"
ln -s ../Cellar/mlx/0.31.2 "$brew_root/opt/mlx"

run() { # run NAME [ENV...]: bundle a new app; output in $out, tool log in $log
	local name=$1
	shift
	app=$(new_app "$name")
	log="$work/$name.log"
	: >"$log"
	out=$(env PATH="$work/bin:$PATH" TOOL_LOG="$log" BREW_ROOT="$brew_root" "$@" "$here/bundle-mlx.sh" "$app" 2>&1) ||
		fail "$name: exit $?: $out"
}

expect_log() { # expect_log NAME LINE: LINE was logged
	grep -qxF -- "$2" "$log" || fail "$1: no '$2' in: $(cat "$log")"
}

check_bundled() { # check_bundled NAME
	local name=$1 fw="$app/Contents/Frameworks" f
	for f in libmlxc.dylib libmlx.dylib mlx.metallib; do
		if [ ! -f "$fw/$f" ] || [ -L "$fw/$f" ]; then fail "$name: $f is not a plain file in Frameworks"; fi
	done
	expect_log "$name" "install_name_tool -id @rpath/libmlx.dylib $fw/libmlx.dylib"
	expect_log "$name" "install_name_tool -id @rpath/libmlxc.dylib $fw/libmlxc.dylib"
	expect_log "$name" "install_name_tool -change /opt/homebrew/opt/mlx/lib/libmlx.0.31.2.dylib @rpath/libmlx.dylib $fw/libmlxc.dylib"
	expect_log "$name" "install_name_tool -delete_rpath /opt/homebrew/lib $fw/libmlxc.dylib"
	expect_log "$name" "install_name_tool -add_rpath @loader_path $fw/libmlxc.dylib"
	expect_log "$name" "install_name_tool -add_rpath @executable_path/../Frameworks $app/Contents/MacOS/hark"
	expect_log "$name" "codesign --force -s - $fw/libmlxc.dylib"
	# The bundle is signed last, after every edit.
	[ "$(tail -n 1 "$log")" = "codesign --force --deep -s - $app" ] || fail "$name: the bundle is not signed last"
	if grep -q -- '-change .*libc++' "$log"; then fail "$name: rewrote a system library reference"; fi
}

run brew
check_bundled brew
[ "$(cat "$app/Contents/Frameworks/libmlx.dylib")" = mlx ] || fail "brew: libmlx.dylib is not Homebrew's"

# MLXC_DIR wins over Homebrew, as a prefix (lib/) or as the folder itself.
mkdir -p "$work/own/lib"
cp "$brew_root/Cellar/mlx/0.31.2/lib/mlx.metallib" "$work/own/lib/"
echo own-mlx >"$work/own/lib/libmlx.dylib"
echo own-mlxc >"$work/own/lib/libmlxc.dylib"
for dir in "$work/own" "$work/own/lib"; do
	run mlxc-dir MLXC_DIR="$dir"
	check_bundled mlxc-dir
	[ "$(cat "$app/Contents/Frameworks/libmlx.dylib")" = own-mlx ] || fail "MLXC_DIR=$dir: did not copy from MLXC_DIR"
done

# A metallib kept elsewhere in the prefix is still found.
mkdir -p "$work/deep/lib" "$work/deep/share/mlx"
cp "$work/own/lib/"*.dylib "$work/deep/lib/"
echo metallib >"$work/deep/share/mlx/mlx.metallib"
run deep MLXC_DIR="$work/deep"
check_bundled deep

# Nothing to bundle: a notice, a signed CPU-only app, exit 0.
mkdir -p "$work/empty"
for case in "MLXC_DIR=$work/empty" "BREW_ROOT=$work/empty"; do
	run missing "$case"
	[ ! -e "$app/Contents/Frameworks/libmlxc.dylib" ] || fail "missing ($case): bundled something"
	grep -q "CPU backend" <<<"$out" || fail "missing ($case): no CPU-backend notice in: $out"
	grep -q "libmlxc.dylib=none" <<<"$out" || fail "missing ($case): does not say what it lacked: $out"
	[ "$(tail -n 1 "$log")" = "codesign --force --deep -s - $app" ] || fail "missing ($case): app not signed"
	if grep -q install_name_tool "$log"; then fail "missing ($case): edited without libraries"; fi
done

# A half install (no metallib) bundles nothing rather than a broken MLX.
rm "$work/own/lib/mlx.metallib"
run partial MLXC_DIR="$work/own"
[ ! -e "$app/Contents/Frameworks/libmlx.dylib" ] || fail "partial: bundled without mlx.metallib"
grep -q "mlx.metallib=none" <<<"$out" || fail "partial: does not name the missing metallib: $out"

# Not a built app: a clear error.
if out=$(env PATH="$work/bin:$PATH" "$here/bundle-mlx.sh" "$work/nope.app" 2>&1); then
	fail "no app: exit 0"
fi
grep -q "build the app first" <<<"$out" || fail "no app: unclear message: $out"

if [ "$fails" -gt 0 ]; then
	echo "bundle-mlx_test: $fails checks failed"
	exit 1
fi
echo "bundle-mlx_test: ok"
