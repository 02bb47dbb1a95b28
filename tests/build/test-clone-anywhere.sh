#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/build/test-clone-anywhere.sh: the README promises tools/test from a
# clone anywhere (issue #36). A test that assumed the clone elsewhere failed
# from one under /root, and nothing run from /work saw it. So: this tree (its
# tracked and untracked files, not its build dirs) copied under /root, built
# there as the demo builds (no unit tests, benchmark or man pages), and its
# user-facing tests that meet the clone's own path run in a sandbox of its
# own: test-cwd.sh (users who cannot enter a directory) and test-first-hour.sh.
# Runs on the host as root; removes the copy. Ends with
# "clone-anywhere: N passed, N failed, N skipped".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
passed=0 failed=0 skipped=0
summary() { echo "clone-anywhere: $passed passed, $failed failed, $skipped skipped"; }

if [[ $(id -u) != 0 || ! -d /root ]]; then
	echo "skip    clone-anywhere: needs root and a /root to clone into"
	skipped=1
	summary
	exit 0
fi
case $top/ in
/root/*) echo "note: this clone is under /root already" ;;
esac

copy=$(mktemp -d /root/.bgrun-test-clone.XXXXXX) || { echo "not ok  clone-anywhere: mktemp under /root failed"; failed=1; summary; exit 1; }
trap 'rm -rf -- "$copy"' EXIT
chmod 755 "$copy" # as git clone makes it (mktemp: 0700)
# What git knows and what it would add, as the working tree has it.
if ! (cd "$top" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$copy" 2>/dev/null); then
	echo "not ok  clone-anywhere: cannot copy the tree into $copy"
	failed=1
	summary
	exit 1
fi

out=$("$copy/tools/sandbox" --build-dir "$copy/build-sandbox" --meson-args "-Dtests=false -Dbenchmark=false -Dman=disabled" \
	--build-only </dev/null 2>&1)
rc=$?
if ((rc != 0)); then
	echo "not ok  clone-anywhere: the build under /root failed (exit $rc)"
	tail -20 <<<"$out" | sed 's/^/    | /'
	failed=1
	summary
	exit 1
fi

tests=("$copy/tests/integration/test-cwd.sh" "$copy/tests/integration/test-first-hour.sh")
out=$("$copy/tools/sandbox" --build-dir "$copy/build-sandbox" --no-build -- \
	"$copy/tests/integration/run.sh" "${tests[@]}" </dev/null 2>&1)
rc=$?
# The run's own lines: each test, and what a failure said.
grep -E '^(ok|not ok)  |^    \|' <<<"$out"
line=$(grep -E '^integration: [0-9]+ passed' <<<"$out" | tail -1)
if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped ]]; then
	passed=${BASH_REMATCH[1]} failed=${BASH_REMATCH[2]} skipped=${BASH_REMATCH[3]}
else
	echo "not ok  clone-anywhere: the sandbox under /root failed (exit $rc) before the tests reported"
	tail -20 <<<"$out" | sed 's/^/    | /'
	failed=$((failed + 1))
fi
summary
((failed == 0))
