# SPDX-License-Identifier: MIT
# What a job costs on disk, and the supervisors bgrund starts ahead of time
# (issue #14). The crash model (src/core/job-store.h): a SIGKILL of anyone
# leaves the page cache, a power loss leaves every job dead; so what must be
# synced is only what an answer told. One fsync before Launch answers, of the
# job's spec.json, by its supervisor; one before its end is told, of its
# result.json; never grant.json or run.json. A job that runs 10 ms gets its
# teardown slot's block (one fdatasync, waited for by nobody), so that a
# Kill's answer costs one overwrite (issue #23).

# Idle: with no job yet, its command line holds the placeholder where an id
# goes. bgrund.service's own (its children): another test's bgrund --listen
# keeps a pool of its own.
pooled_supervisors() {
	local main
	main=$(bgrund_pid) || return 0
	pgrep -P "$main" -f 'bgrun-supervisor --job -{10} ' || true
}
pool_holds() { test "$(pooled_supervisors | wc -l)" "$@"; } # pool_holds -ge 1

# fsync_trace OUT SECONDS [END]: follow bgrund and its idle supervisors with
# strace (fsync-like calls, with their files) over `bgrun run -- sleep
# SECONDS`; with END, until after its end (`bgrun wait`), else detached 0.5 s
# after Launch answered. OUT gets the trace; OUT.answered the time `bgrun
# run` returned (Launch's answer), OUT.id the job.
fsync_trace() {
	local out=$1 seconds=$2 to_end=${3:-} sp
	command -v strace >/dev/null || fail "strace is missing: tools/install-deps installs it"
	bgrun run --wait -q true || fail "warm-up job failed" # fills the pool
	# Full: none is started while strace attaches to those there.
	wait_until 5 pool_holds -eq 4 || fail "the pool was not filled"
	strace -f -qq -y -ttt -e trace=fsync,fdatasync,sync_file_range,syncfs,sync -o "$out" \
		-p "$(bgrund_pid) $(pooled_supervisors | tr '\n' ' ')" &
	sp=$!
	sleep 1 # attached
	bgrun run -q -- sleep "$seconds" >"$out.id" || fail "launch failed"
	echo "$EPOCHREALTIME" >"$out.answered"
	if [[ -n $to_end ]]; then
		bgrun wait "$(cat "$out.id")" >/dev/null || fail "wait failed"
	fi
	sleep 0.5
	kill "$sp"
	wait "$sp" 2>/dev/null || true
}

# job_fsyncs OUT: "TIME FILE" of each fsync-like call on the job's files.
job_fsyncs() {
	grep -v 'resumed>' "$1" | grep -F "/jobs/$(cat "$1.id")/" |
		sed -E 's/^[0-9]+ +([0-9.]+) [a-z_]+\([0-9]+<([^>]*)>.*/\1 \2/'
}

test_one_fsync_before_launch_answers() {
	local t=/tmp/durability-launch.trace id
	# Detached long before the job ends: a sanitized supervisor must not
	# exit under ptrace (LeakSanitizer cannot run there).
	fsync_trace "$t" 3
	id=$(cat "$t.id")
	assert_eq "/var/lib/bgrun/jobs/$id/spec.json /var/lib/bgrun/jobs/$id/teardown" \
		"$(job_fsyncs "$t" | awk '{ print $2 }' | xargs)" "what was synced while the job ran its first 0.5 s"
	awk -v f="$(job_fsyncs "$t" | awk '$2 ~ /spec.json$/ { print $1 }')" -v a="$(cat "$t.answered")" 'BEGIN { exit !(f <= a) }' ||
		fail "the spec was synced after Launch answered"
	! grep -qE 'grant\.json|run\.json' "$t" || fail "a grant or run record was synced: $(grep -E 'grant|run\.json' "$t")"
	bgrun kill "$id" >/dev/null || fail "kill failed"
	rm -f "$t" "$t".*
}

test_one_fsync_before_the_end_is_told() {
	local t=/tmp/durability-end.trace id answered
	[[ -z ${BGRUN_SANITIZER_LOG_DIR:-} ]] ||
		skip "the end is traced in its supervisor, which exits under strace: LeakSanitizer cannot run there"
	fsync_trace "$t" 1 end
	id=$(cat "$t.id")
	answered=$(cat "$t.answered")
	# The slot's block comes 10 ms into the run, before or after the CLI
	# saw Launch's answer: it is never waited for.
	assert_eq "/var/lib/bgrun/jobs/$id/teardown /var/lib/bgrun/jobs/$id/result.json" \
		"$(job_fsyncs "$t" | awk '$2 !~ /spec.json$/ { print $2 }' | xargs)" \
		"what was synced besides the spec, before Wait answered: the slot's block, the result"
	assert_eq "/var/lib/bgrun/jobs/$id/result.json" \
		"$(job_fsyncs "$t" | awk -v a="$answered" '$1 > a && $2 !~ /teardown$/ { print $2 }')" \
		"what was synced after Launch answered, besides the slot's block"
	! grep -qE 'grant\.json|run\.json' "$t" || fail "a grant or run record was synced: $(grep -E 'grant|run\.json' "$t")"
	rm -f "$t" "$t".*
}

test_a_launch_takes_a_supervisor_started_ahead_of_time() {
	bgrun run --wait -q true || fail "warm-up job failed"
	# Refilled when bgrund is idle, never past its size (4).
	wait_until 5 pool_holds -eq 4 ||
		fail "the pool holds $(pooled_supervisors | wc -l) supervisors, not 4"
	idle=$(pooled_supervisors)
	id=$(bgrun run -- sleep 300) || fail "launch failed"
	sup=$(supervisor_pid "$id")
	grep -qx "$sup" <<<"$idle" || fail "the job's supervisor $sup was not one of the idle ones: $idle"
	# It names its job now, where ps and bgrund's search for it look.
	assert_contains "$(tr '\0' ' ' <"/proc/$sup/cmdline")" "--job $id " "the supervisor's command line"
	assert_eq running "$(job_status "$id")" "status"
	wait_until 5 pool_holds -eq 4 || fail "the pool was not refilled"
	bgrun kill "$id" >/dev/null || fail "kill failed"
}

test_idle_supervisors_leave_with_bgrund_and_jobs_stay() {
	id=$(bgrun run -- sleep 300) || fail "launch failed"
	sup=$(supervisor_pid "$id")
	wait_until 5 pool_holds -ge 1 || fail "no supervisor was started ahead of time"
	idle=$(pooled_supervisors)
	systemctl stop bgrund.service || fail "bgrund did not stop"
	for p in $idle; do
		wait_until 5 bash -c "! [[ -e /proc/$p ]]" || fail "idle supervisor $p outlived bgrund"
	done
	pid_alive "$sup" || fail "the running job's supervisor died with bgrund"
	systemctl start bgrund.service || fail "bgrund did not start again"
	assert_eq running "$(job_status "$id")" "status after the restart"
	bgrun kill "$id" >/dev/null || fail "kill failed"
}

# A Kill of a job in a cgroup costs bgrund one fdatasync before it answers:
# the teardown slot's, an overwrite of the block the job's supervisor gave
# it while the job ran; the result follows in the supervisor.
test_one_fdatasync_before_kill_answers() {
	local t=/tmp/durability-kill.trace id sp
	command -v strace >/dev/null || fail "strace is missing: tools/install-deps installs it"
	id=$(bgrun run -- 'sleep 300') || fail "launch failed"
	wait_until 5 bash -c "[[ \$(stat -c %s /var/lib/bgrun/jobs/$id/teardown 2>/dev/null) == 4096 ]]" ||
		fail "the teardown slot was not prepared"
	strace -f -qq -y -ttt -e trace=fsync,fdatasync,sync_file_range,syncfs,sync -o "$t" -p "$(bgrund_pid)" &
	sp=$!
	sleep 1 # attached
	bgrun kill "$id" >/dev/null || fail "kill failed"
	kill "$sp"
	wait "$sp" 2>/dev/null || true
	assert_eq "fdatasync /var/lib/bgrun/jobs/$id/teardown" \
		"$(grep -v 'resumed>' "$t" | sed -nE 's/^[0-9]+ +[0-9.]+ ([a-z_]+)\([0-9]+<([^>]*)>.*/\1 \2/p')" \
		"what bgrund synced for the Kill"
	rm -f "$t"
}
