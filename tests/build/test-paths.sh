#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/build/test-paths.sh: where a build of bgrund looks is what meson was
# told. Configures a throwaway build dir with another prefix, --localstatedir
# and --sysconfdir, compiles only bgrund, and checks what it says:
#   bgrund --check-config   "# configuration: FILE, DIR/*.conf" and "# state: DIR",
#                           the compiled-in defaults (no --config: that
#                           would replace both the file and the drop-ins)
#   units/bgrund.service    ExecStart= in the prefix's libexecdir
# then again with relative --localstatedir/--sysconfdir, which meson puts below
# the prefix. bgrund --check-config must create none of the paths it names.
# Runs on the host, no root needed; writes only its own build dir (in $TMPDIR),
# removed at the end. Ends with "paths: N passed, N failed, N skipped".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
passed=0 failed=0 skipped=0

ok() { passed=$((passed + 1)); echo "ok      paths::$1"; }
not_ok() {
	failed=$((failed + 1)); echo "not ok  paths::$1"
	shift
	printf '    | %s\n' "$@"
}
summary() { echo "paths: $passed passed, $failed failed, $skipped skipped"; }

for cmd in meson ninja; do
	if ! command -v "$cmd" >/dev/null; then
		not_ok setup "$cmd is missing: tools/install-deps installs it"; summary; exit 1
	fi
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/bgrun-test-paths.XXXXXX") || { not_ok setup "mktemp failed"; summary; exit 1; }
trap 'rm -rf -- "$dir"' EXIT
# Paths that exist nowhere (unique to this run), so that anything bgrund
# would create there is seen, and is certainly its doing.
tag=${dir##*.}
prefix=/opt/bgrun-x-$tag
statedir=/srv/x-state-$tag
confdir=/srv/x-etc-$tag
b=$dir/build

# build: configure with ARGS..., compile bgrund alone; logs kept for a failure.
build() {
	if [[ -f $b/build.ninja ]]; then
		meson configure "$b" "$@" >"$dir/setup.log" 2>&1
	else
		# plain: no optimization, the quickest build of the one target.
		meson setup "$b" "$top" --buildtype=plain -Dtests=false "$@" >"$dir/setup.log" 2>&1
	fi || { not_ok "configure ($*)" "$(tail -20 "$dir/setup.log")"; return 1; }
	# By path and type: a library may be called bgrund too.
	meson compile -C "$b" src/bgrund/bgrund:executable >"$dir/compile.log" 2>&1 ||
		{ not_ok "compile bgrund ($*)" "$(tail -20 "$dir/compile.log")"; return 1; }
}

# check NAME EXPECTED-STATE-DIR EXPECTED-CONFIG-DIR: what --check-config says,
# and that it made none of it.
check() {
	local name=$1 want_state=$2 want_conf=$3 out p made=()
	for p in "$want_state" "$want_conf" "$prefix"; do
		[[ ! -e $p ]] || { not_ok "$name" "$p exists before the test; cannot tell what bgrund makes"; return; }
	done
	if ! out=$("$b/src/bgrund/bgrund" --check-config 2>&1); then
		not_ok "$name: bgrund --check-config" "$out"
		return
	fi
	local want_cfg="# configuration: $want_conf/bgrun/bgrund.conf, $want_conf/bgrun/bgrund.conf.d/*.conf"
	local got_cfg got_state
	got_cfg=$(grep '^# configuration: ' <<<"$out")
	got_state=$(grep '^# state: ' <<<"$out")
	if [[ $got_cfg == "$want_cfg" ]]; then
		ok "$name: configuration file and drop-ins from sysconfdir ($want_conf/bgrun)"
	else
		not_ok "$name: configuration file and drop-ins from sysconfdir" "expected: $want_cfg" "got:      $got_cfg"
	fi
	if [[ $got_state == "# state: $want_state/lib/bgrun" ]]; then
		ok "$name: state dir from localstatedir ($want_state/lib/bgrun)"
	else
		not_ok "$name: state dir from localstatedir" "expected: # state: $want_state/lib/bgrun" "got:      $got_state"
	fi
	for p in "$want_state" "$want_conf" "$prefix"; do
		[[ -e $p ]] && made+=("$p")
	done
	if ((${#made[@]} == 0)); then
		ok "$name: --check-config creates nothing"
	else
		not_ok "$name: --check-config creates nothing" "made: ${made[*]}"
		# Not ours to leave behind: these names are unique to this run.
		rm -rf -- "${made[@]}"
	fi
}

# check_unit: the generated unit starts bgrund from the prefix's libexecdir.
check_unit() {
	local got
	got=$(grep '^ExecStart=' "$b/units/bgrund.service" 2>&1)
	if [[ $got == "ExecStart=$prefix/libexec/bgrund" ]]; then
		ok "bgrund.service: ExecStart in the prefix's libexecdir"
	else
		not_ok "bgrund.service: ExecStart in the prefix's libexecdir" \
			"expected: ExecStart=$prefix/libexec/bgrund" "got:      $got"
	fi
}

if build --prefix="$prefix" --localstatedir="$statedir" --sysconfdir="$confdir"; then
	check "absolute dirs" "$statedir" "$confdir"
	check_unit
	# Relative ones are below the prefix (meson.build says so).
	build --localstatedir=var --sysconfdir=etc &&
		check "relative dirs" "$prefix/var" "$prefix/etc"
fi

summary
((failed == 0))
