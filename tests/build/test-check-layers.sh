#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/build/test-check-layers.sh tree|self BUILD-DIR: tools/check-layers as
# meson tests (suite unit, so tools/test runs both), in TAP.
#   tree  the check on this tree, with this build's build-config.h;
#   self  the check's own test, on copies of what it reads (src/, include/,
#         the check and its allow-list, build-config.h, and a
#         compile_commands.json that names the build's own objects) in
#         $TMPDIR: the untouched copy passes, and each planted fault fails
#         it, for that fault (its failure line is the one expected). The
#         copies share the check's cache (CHECK_LAYERS_CACHE), so that each
#         asks the compiler only about what was planted. Removed at the end.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mode=${1:-} build=${2:-}
[[ ($mode == tree || $mode == self) && -f $build/build-config.h ]] || {
	echo "usage: $0 tree|self BUILD-DIR (a configured build)" >&2; exit 2; }

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=1; echo "not ok $n - $1"
	shift
	printf '# %s\n' "$@"
}

if [[ $mode == tree ]]; then
	echo "1..1"
	out=$("$top/tools/check-layers" "$build" 2>&1); rc=$?
	mapfile -t lines <<<"$out"
	if ((rc == 0)); then
		ok "check-layers: the tree keeps its layering and sizes"
		printf '# %s\n' "${lines[@]}" # its notes: allow-list entries to remove
	else
		not_ok "check-layers: the tree keeps its layering and sizes (exit $rc)" "${lines[@]}" \
			"fix it, or put it on tools/check-layers.allow with its reason"
	fi
	exit "$failed"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bgrun-test-check-layers.XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf -- "$tmp"' EXIT
pristine=$tmp/pristine
mkdir -p "$pristine/tools" "$pristine/build"
cp -a "$top/src" "$top/include" "$pristine/"
cp -a "$top/tools/check-layers" "$top/tools/check-layers.allow" "$pristine/tools/"
cp -a "$build/build-config.h" "$pristine/build/"
export CHECK_LAYERS_CACHE=$tmp/cache
# objects_json DIR [ENTRY...]: DIR's compile_commands.json: the build's own
# objects, for DIR's sources of the same names, and ENTRYs (JSON objects).
objects_json() {
	/usr/bin/python3 -I -S - "$top" "$build" "$@" <<'PY' >"$1/build/compile_commands.json"
import json, os, sys
top, build, copy, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
out = []
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    src = os.path.relpath(os.path.join(e["directory"], e["file"]), top)
    if src.startswith("src/"):
        out.append({"directory": e["directory"], "file": os.path.join(copy, src),
                    "output": os.path.join(e["directory"], e["output"])})
print(json.dumps(out + [json.loads(x) for x in extra]))
PY
}
objects_json "$pristine"

# copy NAME: a fresh copy of the pristine tree in $tmp/NAME, its path printed.
copy() {
	rm -rf -- "${tmp:?}/$1"
	cp -a "$pristine" "$tmp/$1" && objects_json "$tmp/$1" && echo "$tmp/$1"
}
# plant FILE LINE: LINE after the first line (the licence) of FILE.
plant() { sed -i "1a\\$2" "$1"; }
# fn NAME LINES: a function of LINES lines, counted as the check counts them
# (its first line to its closing brace).
fn() {
	local i
	echo "int $1(void) {"
	echo "        int x = 0;"
	for ((i = 3; i < $2; i++)); do echo "        x++;"; done
	echo "}"
}

# expect NAME DIR PATTERN...: the check on DIR fails (exit 1) with a line
# matching each PATTERN; with no PATTERN, it passes (exit 0).
expect() {
	local name=$1 dir=$2 out rc p
	shift 2
	out=$("$dir/tools/check-layers" "$dir/build" 2>&1); rc=$?
	mapfile -t lines <<<"$out"
	if (($# == 0)); then
		((rc == 0)) && { ok "$name"; return; }
		not_ok "$name: exit $rc, not 0" "${lines[@]}"; return
	fi
	((rc == 1)) || { not_ok "$name: exit $rc, not 1" "${lines[@]}"; return; }
	for p in "$@"; do
		grep -qE -- "$p" <<<"$out" || { not_ok "$name: no line matching: $p" "${lines[@]}"; return; }
	done
	ok "$name"
}

# expect_unchecked NAME DIR PATTERN: the check on DIR cannot check (exit 2), saying PATTERN.
expect_unchecked() {
	local out rc
	out=$("$2/tools/check-layers" "$2/build" 2>&1); rc=$?
	((rc == 2)) && grep -qE -- "$3" <<<"$out" && { ok "$1"; return; }
	mapfile -t lines <<<"$out"
	not_ok "$1: exit $rc, not 2 with a line matching $3" "${lines[@]}"
}

expect "the untouched copy passes" "$pristine"

d=$(copy basic-sdbus) && plant "$d/src/basic/utf8.c" '#include <systemd/sd-bus.h>'
expect "sd-bus.h in a basic file fails" "$d" '^check-layers: src/basic/utf8\.c>systemd/sd-bus\.h: '

d=$(copy core-shared) && plant "$d/src/core/job-id.c" '#include "bus-json.h"'
expect "a shared header in a core file fails" "$d" '^check-layers: src/core/job-id\.c>src/shared/bus-json\.h: '

d=$(copy lifecycle-sdbus) && plant "$d/src/bgrund/lifecycle/owner.c" '#include <systemd/sd-bus.h>'
expect "sd-bus.h in a lifecycle file (owner.c) fails" "$d" '^check-layers: src/bgrund/lifecycle/owner\.c>systemd/sd-bus\.h: '

d=$(copy lifecycle-face) && plant "$d/src/bgrund/lifecycle/job-log.c" '#include "bus-record.h"'
expect "a dbus/ header in a lifecycle file (job-log.c) fails" "$d" '^check-layers: src/bgrund/lifecycle/job-log\.c>src/bgrund/dbus/bus-record\.h: '

d=$(copy folder-loop) && plant "$d/src/bgrund/dbus/bus-record.c" '#include "bus-listen.h"'
expect "two folders that include each other (dbus/, listen/) fail" "$d" '^check-layers: src/bgrund/dbus<>src/bgrund/listen: '

d=$(copy supervisor-bgrund) && plant "$d/src/supervisor/environment.c" '#include "job-table.h"'
expect "a bgrund header in a supervisor file fails" "$d" '^check-layers: src/supervisor/environment\.c>src/bgrund/lifecycle/job-table\.h: '

d=$(copy cli-supervisor) && plant "$d/src/bgrun/record.c" '#include "publish.h"'
expect "a supervisor header in a CLI file fails" "$d" '^check-layers: src/bgrun/record\.c>src/supervisor/publish\.h: '

d=$(copy new-folder) && mkdir "$d/src/extra" && printf '/* x */\nint extra(void);\n' >"$d/src/extra/extra.h"
expect "a file that no rule covers fails" "$d" '^check-layers: src/extra/extra\.h: '

d=$(copy function-120) && fn at_limit 120 >>"$d/src/basic/utf8.c"
expect "a function of 120 lines passes" "$d"

d=$(copy function-121) && fn too_long 121 >>"$d/src/basic/utf8.c"
expect "a function of 121 lines fails" "$d" '^check-layers: src/basic/utf8\.c:too_long: 121 lines '

d=$(copy file-601) && f=$d/src/basic/utf8.c &&
	while (($(wc -l <"$f") < 601)); do echo "/* filler */" >>"$f"; done
expect "a .c file of 601 lines fails" "$d" '^check-layers: src/basic/utf8\.c: 601 lines '

# The escapes issue #37 found (row 3), each planted.
d=$(copy function-comment) && {
	echo "int commented(void) { /* a comment after the brace */"
	fn commented_body 200 | tail -n +2
} >>"$d/src/basic/utf8.c"
expect "a 200-line function whose first line ends with a comment fails" "$d" \
	'^check-layers: src/basic/utf8\.c:commented: 200 lines '

d=$(copy function-brace-in-string) && {
	echo "int braces(void) {"
	echo '        const char *s = "}";'
	echo "        char c = '}';"
	echo "        /* } */"
	fn braces_body 130 | tail -n +5
} >>"$d/src/basic/utf8.c"
expect "braces in strings, characters and comments do not end a function" "$d" \
	'^check-layers: src/basic/utf8\.c:braces: 130 lines '

d=$(copy header-700) && f=$d/src/basic/utf8.h &&
	while (($(wc -l <"$f") < 700)); do echo "/* filler */" >>"$f"; done
expect "a 700-line header fails" "$d" '^check-layers: src/basic/utf8\.h: 700 lines '

d=$(copy path-include) && plant "$d/src/bgrund/lifecycle/job-log.c" '#include "src/bgrund/dbus/bus-record.h"'
expect "an include by a path is named, and judged by the rules" "$d" \
	'^check-layers: src/bgrund/lifecycle/job-log\.c>src/bgrund/dbus/bus-record\.h: includes a header by a path' \
	'^check-layers: src/bgrund/lifecycle/job-log\.c>src/bgrund/dbus/bus-record\.h: lifecycle may not include'

d=$(copy cli-mcp) && plant "$d/src/bgrun/record.c" '#include "mcp-args.h"'
expect "an mcp/ header in a CLI file fails (mcp/ is above the CLI)" "$d" \
	'^check-layers: src/bgrun/record\.c>src/bgrun/mcp/mcp-args\.h: cli may not include src/bgrun/mcp/\*'

# A call the layering forbids, through a declaration of the caller's own:
# a lifecycle file and a dbus/ file compiled into the copy's build dir.
# extern_copy NAME HOW: esc-a.c (lifecycle) calls esc_b() of esc-b.c
# (dbus/), declared in a block (HOW=block) or not called at all (none).
extern_copy() {
	local d a
	d=$(copy "$1") || return 1
	a='int esc_a(void) { return 0; }'
	[[ $2 == block ]] && a='int esc_a(void) { extern int esc_b(void); return esc_b(); }'
	printf '/* x */\n%s\n' "$a" >"$d/src/bgrund/lifecycle/esc-a.c"
	printf '/* x */\nint esc_b(void) { return 1; }\n' >"$d/src/bgrund/dbus/esc-b.c"
	"${CC:-cc}" -c -o "$d/build/esc-a.o" "$d/src/bgrund/lifecycle/esc-a.c" || return 1
	"${CC:-cc}" -c -o "$d/build/esc-b.o" "$d/src/bgrund/dbus/esc-b.c" || return 1
	objects_json "$d" "{\"directory\": \"$d/build\", \"file\": \"../src/bgrund/lifecycle/esc-a.c\", \"output\": \"esc-a.o\"}" \
		"{\"directory\": \"$d/build\", \"file\": \"../src/bgrund/dbus/esc-b.c\", \"output\": \"esc-b.o\"}"
	echo "$d"
}
d=$(extern_copy extern-none none)
expect "a lifecycle file beside a dbus/ file it does not call passes" "$d"

d=$(extern_copy extern-block block)
expect "a call into dbus/ through a block-scope extern fails" "$d" \
	'^check-layers: src/bgrund/lifecycle/esc-a\.c>src/bgrund/dbus/esc-b\.c: lifecycle calls esc_b'

# Call loops, from objects: two files of src/basic compiled into the copy's
# build dir, named in its compile_commands.json with the build's own.
# calls_copy NAME B-CALLS-A [inline]: a.c calls b.c; b.c calls a.c back
# if yes; with inline, a.c only uses an inline function of loop-b.h (b.c's
# header) that calls free(): no symbol of b.c's in a.o, the call all the
# same; with accessor, one that only reads a field, through another that
# does (return (...) and all): no call.
calls_copy() {
	local d b a='int loop_b(void);\nint loop_a(void) { return loop_b(); }'
	d=$(copy "$1") || return 1
	if [[ ${3:-} == inline ]]; then
		printf '/* x */\n#include <stdlib.h>\nstatic inline void loop_release(void *p) { free(p); }\n' >"$d/src/basic/loop-b.h"
		a='#include "loop-b.h"\nint loop_a(void) { loop_release(0); return 0; }'
	elif [[ ${3:-} == accessor ]]; then
		printf '/* x */\nstatic inline int loop_is(const int *p) { return (*p > 0); }\nstatic inline int loop_both(const int *p) { if (!p) return 0; return (loop_is(p) && *p < 9); }\n' >"$d/src/basic/loop-b.h"
		a='#include "loop-b.h"\nint loop_a(void) { int x = 1; return loop_both(&x); }'
	fi
	printf "/* x */\n$a\n" >"$d/src/basic/loop-a.c"
	b='int loop_b(void) { return 1; }'
	[[ $2 == yes ]] && b='int loop_a(void); int loop_b(void) { return loop_a(); }'
	printf '/* x */\n%s\n' "$b" >"$d/src/basic/loop-b.c"
	for f in loop-a loop-b; do
		"${CC:-cc}" -O0 -c -I"$d/src/basic" -o "$d/build/$f.o" "$d/src/basic/$f.c" || return 1
	done
	objects_json "$d" "{\"directory\": \"$d/build\", \"file\": \"../src/basic/loop-a.c\", \"output\": \"loop-a.o\"}" \
		"{\"directory\": \"$d/build\", \"file\": \"../src/basic/loop-b.c\", \"output\": \"loop-b.o\"}"
	echo "$d"
}
d=$(calls_copy calls-one-way no)
expect "a file that calls another of its folder passes" "$d"

d=$(calls_copy calls-round yes)
expect "two files of a folder that call each other fail" "$d" '^check-layers: src/basic/loop-a\.c~loop-b\.c: '

# A header's inline function is its file's: a.c using loop-b.h's inline
# calls b.c, though a.o names nothing of b.c's (the hole of issue #49:
# job_input_disconnect() hid the lifecycle's loop so).
d=$(calls_copy calls-round-inline yes inline)
expect "a loop through a header's inline function fails" "$d" '^check-layers: src/basic/loop-a\.c~loop-b\.c: '

d=$(calls_copy calls-accessor yes accessor)
expect "a header's accessors, one using another, are no call" "$d"

# Folders whose files call each other round: the issue's own, a
# containment/ file calling the lifecycle's job_kill through a block-scope
# extern, while the lifecycle (job-end.c) calls containment_cleanup.
d=$(copy calls-folders) &&
	printf '/* x */\nint esc_loop(void) { extern void job_kill(void *j); job_kill(0); return 0; }\n' \
		>"$d/src/bgrund/containment/esc-loop.c" &&
	"${CC:-cc}" -c -o "$d/build/esc-loop.o" "$d/src/bgrund/containment/esc-loop.c" &&
	objects_json "$d" "{\"directory\": \"$d/build\", \"file\": \"../src/bgrund/containment/esc-loop.c\", \"output\": \"esc-loop.o\"}"
expect "two folders whose files call each other fail" "$d" \
	'^check-layers: src/bgrund/containment<~>src/bgrund/lifecycle: .*esc-loop\.c>src/bgrund/lifecycle/job-end\.c'

# A build dir with no objects to read the calls from cannot be checked:
# the check says so (exit 2), never ok on what it did not read.
d=$(copy no-objects) && rm "$d/build/compile_commands.json"
expect_unchecked "a build dir without its objects is not checked" "$d" 'compile_commands\.json'
d=$(copy objects-gone) &&
	objects_json "$d" "{\"directory\": \"$d/build\", \"file\": \"../src/basic/utf8.c\", \"output\": \"gone.o\"}"
expect_unchecked "a build dir whose objects are gone is not checked" "$d" 'is not built'

# The allow-list lets its entries pass, and only them: not a new long
# function in a file that is on it. Its own entry, so that the case does not
# depend on which debts the tree's list still holds.
# allowed_copy NAME: a copy whose utf8.c is over 600 lines and allowed so.
allowed_copy() {
	local d f
	d=$(copy "$1") && f=$d/src/basic/utf8.c || return 1
	while (($(wc -l <"$f") < 601)); do echo "/* filler */" >>"$f"; done
	echo "src/basic/utf8.c  planted by the check's self-test" >>"$d/tools/check-layers.allow"
	echo "$d"
}
d=$(allowed_copy allowed)
expect "a .c file over 600 lines on the allow-list passes" "$d"

d=$(allowed_copy allowed-function) && fn also_too_long 130 >>"$d/src/basic/utf8.c"
expect "a new long function in an allowed file fails" "$d" \
	'^check-layers: src/basic/utf8\.c:also_too_long: 130 lines '

# The plan last: it counts the tests that ran, so a new one needs no number.
echo "1..$n"
exit "$failed"
