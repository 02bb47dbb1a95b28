#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs the integration tests inside the sandbox: every test_* function of
# every tests/integration/test-*.sh (or the files given), each in its own
# subshell, and prints "N passed, N failed, N skipped".
#   BGRUN_TEST_FILTER=REGEX   run only tests whose name matches
#   BGRUN_SANITIZER_LOG_DIR   (tools/test --sanitize) where sanitizer reports
#                             go (tools/test fails on any file there). Sanitizer
#                             output on stderr (UBSan's always is) is copied
#                             there: from each test's output, and at the end
#                             from the sandbox's console, which has bgrund's and
#                             its supervisors' stderr. Before that, bgrund is
#                             stopped, so that its LeakSanitizer runs.
#   BGRUN_SANITIZER_CANARY    (tools/test --sanitize) a program that leaks and
#                             overflows on purpose: run as a unit with
#                             bgrund's restrictions and sanitizer options, its
#                             leak must reach its log_path and its UBSan report
#                             the console search (one more test, counted)
set -u
# Sanitizer output, wherever it was printed (the same in tools/test).
san_pattern='==(ERROR|WARNING): [A-Za-z]+Sanitizer|[A-Za-z]+Sanitizer:DEADLYSIGNAL|: runtime error: |^SUMMARY: [A-Za-z]+Sanitizer|LeakSanitizer has encountered a fatal error'
# Under tools/test --sanitize, the tests whose point is volume (the same few
# bgrun calls thousands of times: 4,200 in test-memory.sh) run their bgrun
# without LeakSanitizer at exit, which costs some 40 ms of CPU a call, a
# third of a launch: minutes on two cores. The same calls are leak-checked in
# the other tests; bgrund and its supervisors keep their checks everywhere.
san_bulk_tests='^test-memory::'
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Outside the sandbox (meson test --suite integration on the host) there is
# nothing to test against: skip, as meson and run.sh count it, with the reason.
if [[ ${BGRUN_IN_TEST_SANDBOX:-} != 1 ]]; then
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
			[[ -n ${ASAN_OPTIONS:-} && $name =~ $san_bulk_tests ]] && export ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0
			source "$here/lib.sh"
			source "$f"
			"$t"
		) >"$workdir/out" 2>&1 </dev/null
		rc=$?
		ms=$((($(date +%s%N) - start) / 1000000))
		if [[ -n ${BGRUN_SANITIZER_LOG_DIR:-} ]] && LC_ALL=C grep -qaE "$san_pattern" "$workdir/out"; then
			cp "$workdir/out" "$BGRUN_SANITIZER_LOG_DIR/output-of-$name"
		fi
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
		if [[ ${BGRUN_SANDBOX_KIND:-} == container ]]; then
			if ! "$BGRUN_SANDBOX_BGRUND" pid >/dev/null; then
				echo "not ok  $name: bgrund is not running afterwards"
				failed=$((failed + 1)); failures+=("$name (bgrund down)")
				"$BGRUN_SANDBOX_BGRUND" start
			fi
		elif ! systemctl is-active -q bgrund.service; then
			echo "not ok  $name: bgrund is not active afterwards"
			failed=$((failed + 1)); failures+=("$name (bgrund down)")
			systemctl reset-failed bgrund.service >/dev/null 2>&1
			systemctl start bgrund.service
		fi
	done
done
rm -rf "$workdir"

# console_reports FILE [SKIP-REGEX]: the sanitizer reports in the console log
# FILE, each with some context; none of the lines matching SKIP-REGEX. The
# console is a terminal: lines end in CR, and a program not told color=never
# colors its report. It holds what bgrund logged about the tests' input too,
# invalid UTF-8 included: bytes, not text (LC_ALL=C, grep -a), or grep would
# only say "binary file matches".
console_reports() {
	local plain n
	plain=$(mktemp)
	LC_ALL=C sed -e 's/\x1b\[[0-9;]*m//g' -e 's/\r$//' "$1" >"$plain"
	LC_ALL=C grep -naE "$san_pattern" "$plain" | { [[ -n ${2:-} ]] && LC_ALL=C grep -avE "$2" || cat; } |
		cut -d: -f1 | while read -r n; do
			LC_ALL=C sed -n "$((n > 2 ? n - 2 : 1)),$((n + 30))p" "$plain"
			echo ---
		done
	rm -f "$plain"
}

# The canary: sanitizer reports made under bgrund's restrictions
# (NoNewPrivileges=, its capability bounding set: LeakSanitizer ptraces the
# process's own threads) and with bgrund's options reach where tools/test
# looks: the leak its log_path, the UBSan report (stderr, the console, like
# bgrund's) the console search. Without this, no report from bgrund could also
# mean that none could be made or seen.
canary_src=sanitizer-canary.c
if [[ -n ${BGRUN_SANITIZER_CANARY:-} ]]; then
	name=sanitizers::canary_reports_reach_the_logs_under_bgrund_restrictions
	cdir=$(mktemp -d /tmp/bgrun-canary.XXXXXX)
	chmod 0755 "$cdir"
	caps=$(systemctl show -P CapabilityBoundingSet bgrund.service)
	nnp=$(systemctl show -P NoNewPrivileges bgrund.service)
	# bgrund's own sanitizer options (its unit's Environment=, no blanks in
	# them), with the canary's log_path in a dir of its own.
	env=()
	for a in $(systemctl show -P Environment bgrund.service); do
		[[ $a == [A-Z]*SAN_OPTIONS=* ]] &&
			env+=(-p "Environment=$(sed -E "s|log_path=[^:]*/|log_path=$cdir/|g" <<<"$a")")
	done
	systemd-run --quiet --wait --collect -p Type=exec \
		-p NoNewPrivileges="$nnp" -p CapabilityBoundingSet="$caps" "${env[@]}" \
		"$BGRUN_SANITIZER_CANARY" >/dev/null 2>"$cdir/systemd-run"
	leak=$(cat "$cdir"/sanitizer.* 2>/dev/null)
	ub=
	for ((i = 0; i < 40; i++)); do # the console copier is asynchronous
		ub=$(console_reports "${BGRUN_SANDBOX_LOG:-/dev/null}" | LC_ALL=C grep -aF "$canary_src")
		[[ -n $ub ]] && break
		sleep 0.05
	done
	if [[ $leak == *"ERROR: LeakSanitizer: detected memory leaks"* && $ub == *"runtime error: signed integer overflow"* ]]; then
		passed=$((passed + 1)); echo "ok      $name"
	else
		failed=$((failed + 1)); failures+=("$name")
		echo "not ok  $name: expected a LeakSanitizer report in its log_path and a UBSan report on the console"
		echo "    | NoNewPrivileges=$nnp CapabilityBoundingSet=$caps"
		echo "    | options: ${env[*]}"
		echo "    | console: ${ub:-nothing}"
		cat "$cdir/systemd-run" "$cdir"/sanitizer.* 2>/dev/null | sed 's/^/    | /' | head -40
	fi
	rm -rf "$cdir"
fi

if [[ -n ${BGRUN_SANITIZER_LOG_DIR:-} ]]; then
	# A process that is SIGKILLed (as the sandbox's poweroff does) writes no
	# report: bgrund exits on SIGTERM, and checks for leaks as it does.
	if [[ ${BGRUN_SANDBOX_KIND:-} == container ]]; then
		"$BGRUN_SANDBOX_BGRUND" stop
	else
		systemctl stop bgrund.service
	fi
	# What went to the console: bgrund's stderr, its supervisors' (and of
	# any of them without a log_path, every report). The canary's are not.
	if [[ -n ${BGRUN_SANDBOX_LOG:-} && -r $BGRUN_SANDBOX_LOG ]]; then
		sleep 0.5 # the console copier is asynchronous
		f=$BGRUN_SANITIZER_LOG_DIR/console-of-the-sandbox
		console_reports "$BGRUN_SANDBOX_LOG" "$canary_src" >"$f"
		[[ -s $f ]] || rm -f "$f"
	else
		echo "run.sh: no console log to search (BGRUN_SANDBOX_LOG=${BGRUN_SANDBOX_LOG:-})" \
			>"$BGRUN_SANITIZER_LOG_DIR/console-of-the-sandbox"
	fi
fi

if ((passed + failed + skipped == 0)); then
	failed=1; failures+=("no test ran${BGRUN_TEST_FILTER:+ (BGRUN_TEST_FILTER=$BGRUN_TEST_FILTER matches none)}")
fi
((failed)) && printf 'failed: %s\n' "${failures[@]}"
echo "integration: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
