#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs the integration tests inside the sandbox: every test_* function of
# every tests/integration/test-*.sh (or the files given), each in its own
# subshell, and prints "N passed, N failed, N skipped".
#   BGRUN_TEST_FILTER=REGEX   run only tests whose name matches
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Outside the sandbox (meson test --suite integration on the host) there is
# nothing to test against: skip, as meson and run.sh count it, with the reason.
if [[ ${BGRUN_SANDBOX:-} != 1 ]]; then
	echo "SKIP: needs tools/sandbox: a private systemd with a system bus; run tools/test"
	exit 77
fi

files=("$@")
((${#files[@]})) || files=("$here"/test-*.sh)

passed=0 failed=0 skipped=0 failures=()
workdir=$(mktemp -d /tmp/bgrun-it.XXXXXX)
for f in "${files[@]}"; do
	# A file that does not load (missing, a syntax error) or holds no test
	# is a failure, never a quiet "0 passed".
	if ! tests=$(bash -c "source '$here/lib.sh' && source '$f' && declare -F" 2>"$workdir/load"); then
		failed=$((failed + 1)); failures+=("$f (does not load)")
		echo "not ok  $f: does not load"; sed 's/^/    | /' "$workdir/load"
		continue
	fi
	tests=$(awk '$3 ~ /^test_/ {print $3}' <<<"$tests")
	if [[ -z $tests ]]; then
		failed=$((failed + 1)); failures+=("$f (no tests)")
		echo "not ok  $f: holds no test_* function"
		continue
	fi
	for t in $tests; do
		[[ -n ${BGRUN_TEST_FILTER:-} && ! $t =~ $BGRUN_TEST_FILTER ]] && continue
		name="$(basename "$f" .sh)::$t"
		start=$(date +%s%N)
		(
			set +e
			cd "$workdir" || exit 1
			source "$here/lib.sh"
			source "$f"
			"$t"
		) >"$workdir/out" 2>&1 </dev/null
		rc=$?
		ms=$((($(date +%s%N) - start) / 1000000))
		case $rc in
		0)
			passed=$((passed + 1)); echo "ok      $name (${ms} ms)"
			grep '^NOTE:' "$workdir/out" | sed 's/^NOTE:/        note:/'
			;;
		77) skipped=$((skipped + 1)); echo "skip    $name: $(grep -m1 SKIP "$workdir/out" | sed 's/.*SKIP: //')" ;;
		*)
			failed=$((failed + 1)); failures+=("$name")
			echo "not ok  $name (${ms} ms, exit $rc)"
			sed 's/^/    | /' "$workdir/out" | tail -40
			;;
		esac
		# bgrund must survive every test.
		if ! systemctl is-active -q bgrund.service; then
			echo "not ok  $name: bgrund is not active afterwards"
			failed=$((failed + 1)); failures+=("$name (bgrund down)")
			systemctl reset-failed bgrund.service >/dev/null 2>&1
			systemctl start bgrund.service
		fi
	done
done
rm -rf "$workdir"

if ((passed + failed + skipped == 0)); then
	failed=1; failures+=("no test ran${BGRUN_TEST_FILTER:+ (BGRUN_TEST_FILTER=$BGRUN_TEST_FILTER matches none)}")
fi
((failed)) && printf 'failed: %s\n' "${failures[@]}"
echo "integration: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
