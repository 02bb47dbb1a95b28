#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/build/test-sandbox-keep.sh: what tools/sandbox --keep says of the
# sandbox it keeps (issue #25). Its "enter:" line, run as printed, gives the
# shell COMMAND's environment: bgrun-sandbox-login works there. With
# --no-systemd it does not speak of systemd. Runs on the host (it starts
# sandboxes, as root), on the build dir tools/test built (--no-build), and
# stops what it kept. Ends with "sandbox-keep: N passed, N failed, N skipped".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_dir=${BGRUN_BUILD_DIR:-$top/build-sandbox}
passed=0 failed=0 skipped=0

ok() { passed=$((passed + 1)); echo "ok      sandbox-keep::$1"; }
not_ok() {
	failed=$((failed + 1)); echo "not ok  sandbox-keep::$1"
	shift
	printf '    | %s\n' "$@"
}
summary() { echo "sandbox-keep: $passed passed, $failed failed, $skipped skipped"; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/bgrun-test-keep.XXXXXX") || { not_ok setup "mktemp failed"; summary; exit 1; }
kept=()
stop_kept() {
	for id in "${kept[@]}"; do
		"$top/tools/sandbox" --build-dir "$build_dir" --stop "$id" >/dev/null 2>&1 ||
			echo "sandbox-keep: could not stop kept sandbox $id" >&2
	done
	rm -rf -- "$dir"
}
trap stop_kept EXIT

# keep NAME [OPTION...]: a sandbox kept after `true`; its words in $dir/NAME.
keep() {
	local name=$1 id
	shift
	"$top/tools/sandbox" --build-dir "$build_dir" --no-build --keep "$@" -- true >/dev/null 2>"$dir/$name" || {
		not_ok "$name" "tools/sandbox --keep $* failed:" "$(cat "$dir/$name")"
		return 1
	}
	id=$(sed -n 's/.* --stop \([A-Za-z0-9]*\)$/\1/p' "$dir/$name")
	[[ -n $id ]] || { not_ok "$name" "no stop: line" "$(cat "$dir/$name")"; return 1; }
	kept+=("$id")
}

# The "enter:" line as printed, with its shell's `bash` running a command.
enter() { # NAME COMMAND
	local line
	line=$(sed -n 's/^  enter: //p' "$dir/$1")
	[[ $line == *' bash' ]] || return 1
	eval "${line% bash} bash -c $(printf %q "$2")"
}

if keep systemd; then
	name=enter_line_gives_a_shell_where_bgrun_sandbox_login_works
	out=$(enter systemd 'bgrun-sandbox-login bgkeep -- bgrun --user list' 2>&1)
	rc=$?
	if ((rc == 0)); then ok "$name"; else not_ok "$name" "exit status $rc:" "$out" "$(cat "$dir/systemd")"; fi
	name=enter_line_sets_what_commands_get
	# shellcheck disable=SC2016 # expanded inside
	out=$(enter systemd 'echo "$BGRUN_PREFIX|$BGRUN_LIBEXECDIR|$BGRUN_SANDBOX_KIND"; command -v bgrun bgrun-sandbox-login' 2>&1)
	want="$build_dir/stage/usr|"
	if [[ $out == "$want"*"|systemd"$'\n'*/bin/bgrun$'\n'*/tools/sandbox.d/bin/bgrun-sandbox-login ]]; then ok "$name"
	else not_ok "$name" "got:" "$out"; fi
	name=systemd_sandbox_says_systemd_pid
	if grep -q 'kept running (systemd pid [0-9]*)\.$' "$dir/systemd"; then ok "$name"
	else not_ok "$name" "$(cat "$dir/systemd")"; fi
fi

if keep container --no-systemd; then
	name=no_systemd_sandbox_does_not_say_systemd
	if grep -q 'kept running' "$dir/container" && ! grep -qi 'systemd pid' "$dir/container"; then ok "$name"
	else not_ok "$name" "$(cat "$dir/container")"; fi
	name=no_systemd_enter_line_sets_what_commands_get
	# shellcheck disable=SC2016 # expanded inside
	out=$(enter container 'echo "$BGRUN_SANDBOX_KIND|$BGRUN_SANDBOX_BGRUND"' 2>&1)
	if [[ $out == "container|$top/tools/sandbox.d/container-bgrund" ]]; then ok "$name"
	else not_ok "$name" "got:" "$out"; fi
fi

summary
((failed == 0))
