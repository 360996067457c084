#!/usr/bin/env bash
# Copy MLX into a built Hark.app so it runs on Metal without Homebrew's
# paths: libmlxc.dylib, libmlx.dylib and mlx.metallib go to
# Contents/Frameworks (MLX looks for its metallib beside libmlx), install
# names become @rpath, and the bundle is signed ad hoc.
#
# Usage: build/darwin/bundle-mlx.sh build/bin/Hark.app
# Env:   MLXC_DIR   a folder (or a prefix with lib/) holding all three files;
#                   default: Homebrew's mlx-c and mlx (brew --prefix).
#
# Without mlx-c the app is still signed and works on the CPU backend, so a
# missing library is a notice, not a failure. Hark dlopens libmlxc (see
# mlx/mlxc), so the executable does not link it: the rpath added to it is
# what resolves libmlxc's @rpath/libmlx.dylib once loaded from the bundle.
set -euo pipefail

app=${1:?usage: bundle-mlx.sh path/to/Hark.app}
exe_dir="$app/Contents/MacOS"
fw="$app/Contents/Frameworks"
[ -d "$exe_dir" ] || { echo "bundle-mlx: $exe_dir not found (build the app first)"; exit 1; }

# find_lib NAME DIR...: the first DIR (or DIR/lib) that holds NAME, else
# the first NAME found below the DIRs (a metallib may sit elsewhere in a
# prefix). Written for macOS's bash 3.2.
find_lib() {
	local name=$1 d
	shift
	for d in "$@"; do
		[ -n "$d" ] || continue
		if [ -e "$d/$name" ]; then echo "$d/$name"; return; fi
		if [ -e "$d/lib/$name" ]; then echo "$d/lib/$name"; return; fi
	done
	for d in "$@"; do
		[ -d "$d" ] || continue
		d=$(find -L "$d" -maxdepth 6 -name "$name" -print 2>/dev/null | head -n 1)
		if [ -n "$d" ]; then echo "$d"; return; fi
	done
}

# Every edit above invalidates a signature, and on Apple silicon unsigned
# code does not run: sign the libraries, then the bundle around them.
sign() {
	local lib
	for lib in "$fw"/*.dylib; do
		[ -f "$lib" ] && codesign --force -s - "$lib"
	done
	codesign --force --deep -s - "$app"
	echo "bundle-mlx: signed $app ad hoc"
}

if [ -n "${MLXC_DIR:-}" ]; then
	dirs=("$MLXC_DIR")
	from="MLXC_DIR=$MLXC_DIR"
elif command -v brew >/dev/null; then
	dirs=("$(brew --prefix mlx-c 2>/dev/null || true)" "$(brew --prefix mlx 2>/dev/null || true)")
	from="Homebrew (mlx-c, mlx)"
else
	dirs=("")
	from="nowhere (no MLXC_DIR, no brew)"
fi
mlxc=$(find_lib libmlxc.dylib "${dirs[@]}")
mlx=$(find_lib libmlx.dylib "${dirs[@]}")
metallib=$(find_lib mlx.metallib "${dirs[@]}")
if [ -z "$mlxc" ] || [ -z "$mlx" ] || [ -z "$metallib" ]; then
	echo "bundle-mlx: MLX not bundled: looked in $from and found" \
		"libmlxc.dylib=${mlxc:-none} libmlx.dylib=${mlx:-none} mlx.metallib=${metallib:-none}."
	echo "bundle-mlx: Hark.app will run on the CPU backend; 'brew install mlx-c' (or MLXC_DIR=...) and rebuild for Metal."
	sign
	exit 0
fi

mkdir -p "$fw"
# -L: Homebrew's names are symlinks into the Cellar; the bundle needs files.
cp -fL "$mlxc" "$fw/libmlxc.dylib"
cp -fL "$mlx" "$fw/libmlx.dylib"
cp -fL "$metallib" "$fw/mlx.metallib"
chmod u+w "$fw/libmlxc.dylib" "$fw/libmlx.dylib"
echo "bundle-mlx: copied $mlxc, $mlx and $metallib into $fw"

install_name_tool -id @rpath/libmlx.dylib "$fw/libmlx.dylib"
install_name_tool -id @rpath/libmlxc.dylib "$fw/libmlxc.dylib"
# libmlxc names libmlx by whatever path Homebrew built it with.
otool -L "$fw/libmlxc.dylib" | awk 'NR > 1 && $1 ~ /\/libmlx(\.[0-9.]+)?\.dylib$/ { print $1 }' |
	while read -r ref; do
		[ "$ref" = @rpath/libmlx.dylib ] || install_name_tool -change "$ref" @rpath/libmlx.dylib "$fw/libmlxc.dylib"
	done
# Drop the build's rpaths so a Homebrew libmlx can never be picked over the
# bundled one, then look beside the library itself.
for lib in "$fw/libmlxc.dylib" "$fw/libmlx.dylib"; do
	otool -l "$lib" | awk '$1 == "cmd" { rp = ($2 == "LC_RPATH") } rp && $1 == "path" { print $2 }' |
		while read -r rp; do install_name_tool -delete_rpath "$rp" "$lib"; done
	install_name_tool -add_rpath @loader_path "$lib"
done
for exe in "$exe_dir"/*; do
	[ -f "$exe" ] || continue
	loads=$(otool -l "$exe")
	grep -q '@executable_path/../Frameworks' <<<"$loads" ||
		install_name_tool -add_rpath @executable_path/../Frameworks "$exe"
done
sign
