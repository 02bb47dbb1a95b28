# SPDX-License-Identifier: MIT
# bgrun where PID 1 is not systemd and there is no bus: tools/sandbox
# --no-systemd (a container's setting), bgrund --listen started by the entry
# point, each job in a cgroup bgrund makes itself (the cgroupfs mechanism).
# tools/test runs this file there (issue #11).

in_container() {
	[[ ${BGRUN_SANDBOX_KIND:-} == container ]] || skip "needs tools/sandbox --no-systemd (a container's setting)"
}

# The job cgroup as bgrund makes it: beside its own leaf, in the root of
# the container's cgroup namespace.
job_cg() { echo "$CG/bgrun-job-$1"; }

# The newest job whose command is CMD.
job_of_command() {
	bgrun list --json | jq -r --arg c "$1" '[.[] | select(.command == $c)] | last | .id'
}

# wait_procs N CGROUP: until N processes are in CGROUP and below.
wait_procs() {
	local i
	for ((i = 0; i < 100; i++)); do
		(($(all_procs_below "$2" | wc -l) >= $1)) && return 0
		sleep 0.05
	done
	return 1
}

# restart_bgrund [OPTION...]: as the container's entry point starts it.
restart_bgrund() {
	"$BGRUN_SANDBOX_BGRUND" restart "$@" || fail "bgrund did not restart with: $*"
}

test_a_job_runs_in_its_own_cgroup_with_no_flag_and_no_bus() {
	in_container
	[[ $(cat /proc/1/comm) != systemd ]] || fail "PID 1 is systemd"
	[[ ! -e /run/dbus/system_bus_socket ]] || fail "a system bus is there"
	[[ -S /run/bgrun/bus ]] || fail "no bgrund --listen socket"
	[[ -z ${BGRUN_ADDRESS:-}${BGRUN_BUS_ADDRESS:-}${DBUS_SYSTEM_BUS_ADDRESS:-} ]] || fail "an address is set"

	out=$(bgrun run --wait -- 'cat /proc/self/cgroup' 2>err) || fail "run --wait failed: $(cat err)"
	id=$(job_of_command 'cat /proc/self/cgroup')
	[[ $id =~ ^[a-z0-9]+$ ]] || fail "no job of that command in the list"
	assert_contains "$out" "0::/bgrun-job-$id/payload" "the job's cgroup"
	rec=$(bgrun status "$id" --json)
	assert_eq cgroupfs "$(jq -r .containment.mechanism <<<"$rec")" mechanism
	assert_eq true "$(jq -r .containment.contained <<<"$rec")" contained
	assert_eq "" "$(jq -r .containment.unit <<<"$rec")" unit
	assert_eq "/bgrun-job-$id/payload" "$(jq -r .containment.cgroup <<<"$rec")" cgroup
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" dead
	assert_eq cgroup.kill "$(jq -r .teardown.method <<<"$rec")" "teardown method"
	# What bgrund made for it goes once it is empty.
	wait_until 5 test ! -d "$(job_cg "$id")" || fail "$(job_cg "$id") is left"
	mechs=$(busctl --address=unix:path=/run/bgrun/bus get-property org.bgrun.Runtime1 /org/bgrun/Runtime1 \
		org.bgrun.Runtime1.Manager Mechanisms)
	assert_not_contains "$mechs" '"systemd"' "Mechanisms in use"
	assert_contains "$mechs" '"cgroupfs"' "Mechanisms in use"
}

# sleepers_below CGROUP: how many processes below it are a sleep.
sleepers_below() {
	local p n=0
	for p in $(all_procs_below "$1"); do [[ $(cat "/proc/$p/comm" 2>/dev/null) == sleep ]] && n=$((n + 1)); done
	echo "$n"
}

# bgrund's idle supervisors, started ahead of time: its children with the
# placeholder where an id goes in their command line.
pooled_supervisors() {
	local main
	main=$("$BGRUN_SANDBOX_BGRUND" pid) || return 0
	pgrep -P "$main" -f 'bgrun-supervisor --job -{10} ' || true
}
pool_holds() { test "$(pooled_supervisors | wc -l)" "$@"; } # pool_holds -eq 4
# How many of the pids given are gone.
gone_of() {
	local p n=0
	for p in "$@"; do [[ -e /proc/$p ]] || n=$((n + 1)); done
	echo "$n"
}
# bgrund's children that exited and were not reaped.
zombies_of_bgrund() {
	ps -o stat= --ppid "$("$BGRUN_SANDBOX_BGRUND" pid)" | grep -c '^Z' || true
}

# A job's supervisor cannot be moved into its cgroup cheaply (the kernel's
# cgroup write lock waits for an RCU grace period), so one started ahead of
# time forks it there: born in the job's cgroup, bgrund's own child, the
# pooled one gone and reaped.
test_a_launch_forks_a_supervisor_started_ahead_of_time_into_its_cgroup() {
	in_container
	bgrun run --wait -q true || fail "warm-up job failed"
	wait_until 5 pool_holds -eq 4 || fail "the pool holds $(pooled_supervisors | wc -l) supervisors, not 4"
	idle=$(pooled_supervisors)
	id=$(bgrun run -- sleep 300) || fail "launch failed"
	on_exit "bgrun kill $id >/dev/null 2>&1"
	sup=$(supervisor_pid "$id")
	cmdline=$(tr '\0' ' ' <"/proc/$sup/cmdline")
	assert_contains "$cmdline" "--pooled" "the job's supervisor's command line (one of the pool's)"
	assert_contains "$cmdline" "--job $id " "the job's supervisor's command line"
	! grep -qx "$sup" <<<"$idle" || fail "the pooled supervisor $sup itself runs the job, outside a cgroup it was born in"
	assert_eq "0::/bgrun-job-$id/supervisor" "$(grep "^0::" "/proc/$sup/cgroup")" "the supervisor's cgroup"
	assert_eq "$("$BGRUN_SANDBOX_BGRUND" pid)" "$(awk '/^PPid:/ { print $2 }' "/proc/$sup/status")" \
		"the supervisor's parent (bgrund)"
	# The pooled one that forked it leaves, and is reaped: in bgrund's loop,
	# which may come to it after the Launch's answer.
	# shellcheck disable=SC2086
	wait_until_eq 5 1 gone_of $idle || fail "idle supervisors gone after one Launch: $(gone_of $idle), not 1"
	wait_until_eq 5 0 zombies_of_bgrund || fail "bgrund's unreaped children: $(zombies_of_bgrund)"
	assert_eq running "$(job_status "$id")" "status"
	bgrun kill "$id" >/dev/null || fail "kill failed"
	wait_until 5 test ! -d "$(job_cg "$id")" || fail "$(job_cg "$id") is left"
	wait_until_eq 5 0 zombies_of_bgrund || fail "bgrund's unreaped children after the kill: $(zombies_of_bgrund)"
}

# One that does not answer (stopped here) is killed once bgrund stops
# waiting for it (5 s), and the job gets a supervisor spawned for it.
test_a_pooled_supervisor_that_does_not_answer_is_replaced() {
	in_container
	bgrun run --wait -q true || fail "warm-up job failed"
	wait_until 5 pool_holds -eq 4 || fail "the pool holds $(pooled_supervisors | wc -l) supervisors, not 4"
	idle=$(pooled_supervisors)
	on_exit "kill -CONT ${idle//$'\n'/ } 2>/dev/null"
	# shellcheck disable=SC2086
	kill -STOP $idle
	id=$(bgrun run -- sleep 300) || fail "launch failed"
	on_exit "bgrun kill $id >/dev/null 2>&1"
	# shellcheck disable=SC2086
	kill -CONT $idle 2>/dev/null
	sup=$(supervisor_pid "$id")
	assert_not_contains "$(tr '\0' ' ' <"/proc/$sup/cmdline")" "--pooled" "the job's supervisor's command line"
	assert_eq "0::/bgrun-job-$id/supervisor" "$(grep "^0::" "/proc/$sup/cgroup")" "the supervisor's cgroup"
	# shellcheck disable=SC2086
	assert_eq 1 "$(gone_of $idle)" "idle supervisors gone (the one that did not answer)"
	wait_until_eq 5 0 zombies_of_bgrund || fail "bgrund's unreaped children: $(zombies_of_bgrund)"
	assert_eq running "$(job_status "$id")" "status"
	bgrun kill "$id" >/dev/null || fail "kill failed"
}

test_kill_takes_every_escapee_and_confirms_it() {
	in_container
	id=$(bgrun run -- 'setsid sleep 1001 & (sleep 1002 &) ; (trap "" TERM; exec sleep 1003) & trap "" TERM; sleep 1004') ||
		fail "launch failed"
	cg=$(job_cg "$id")
	wait_procs 6 "$cg" ||
		fail "the job's processes are not all in $cg: $(find "$cg" -name cgroup.procs -exec cat {} +)"
	# A forked shell is in the cgroup before it has exec'd its sleep: count
	# the sleeps until all four are there.
	wait_until_eq 5 4 sleepers_below "$cg/payload"
	assert_eq 4 "$(sleepers_below "$cg/payload")" "sleeps in the job's payload cgroup (setsid, double fork, TERM ignored, main)"
	pids=$(all_procs_below "$cg/payload")
	res=$(bgrun kill "$id" --json) || fail "kill failed"
	assert_eq true "$(jq -r .killed <<<"$res")" killed
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	assert_eq cgroup.kill "$(jq -r .teardown.method <<<"$res")" method
	for p in $pids; do ! pid_alive "$p" || fail "pid $p ($(cat "/proc/$p/comm" 2>/dev/null)) survived the kill"; done
	assert_eq killed "$(job_status "$id")" status
	[[ -z $(all_procs_below "$cg") ]] || fail "processes left in $cg"
}

test_a_timeout_is_enforced() {
	in_container
	start=$(date +%s%N)
	bgrun run -q --wait -t 1s -- 'trap "" TERM; setsid sleep 1005 & sleep 1006' 2>err
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	assert_eq 124 "$rc" "exit status of run --wait after a timeout ($(cat err))"
	id=$(bgrun list --json | jq -r '[.[] | select(.command | contains("sleep 1006"))][0].id')
	rec=$(bgrun status "$id" --json)
	assert_eq timed_out "$(jq -r .status <<<"$rec")" status
	assert_eq true "$(jq -r .timed_out <<<"$rec")" timed_out
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" dead
	assert_le "$ms" 15000 "ms until the timed-out job was torn down (TERM ignored: grace, then cgroup.kill)"
	! pgrep -x -f 'sleep 100[56]' >/dev/null || fail "a sleep of the timed-out job is alive"
}

test_a_restart_of_bgrund_keeps_the_job_and_later_kills_it() {
	in_container
	id=$(bgrun run -- 'setsid sleep 1007 & sleep 1008') || fail "launch failed"
	wait_procs 3 "$(job_cg "$id")/payload" || fail "job not up"
	pids=$(all_procs_below "$(job_cg "$id")/payload")
	sup=$(supervisor_pid "$id")
	old=$("$BGRUN_SANDBOX_BGRUND" pid)
	log_lines=$(wc -l <"$BGRUN_SANDBOX_LOG")
	restart_bgrund
	assert_ne "$old" "$("$BGRUN_SANDBOX_BGRUND" pid)" "bgrund's pid after the restart"
	# The jobs never belonged to bgrund: its supervisor is PID 1's now.
	assert_eq 1 "$(awk '{print $4}' "/proc/$sup/stat")" "parent of the supervisor"
	assert_eq running "$(job_status "$id")" "status after the restart"
	for p in $pids; do pid_alive "$p" || fail "pid $p died with the restart"; done
	tail -n +"$((log_lines + 1))" "$BGRUN_SANDBOX_LOG" | grep -q "Started: .* 1 live jobs kept" ||
		fail "bgrund did not say it kept the job: $(tail -n +"$((log_lines + 1))" "$BGRUN_SANDBOX_LOG" | grep Started)"
	res=$(bgrun kill "$id" --json) || fail "kill after the restart failed"
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	for p in $pids; do ! pid_alive "$p" || fail "pid $p survived the kill"; done
	# Kill answers at the payload's confirmation; the supervisor completes
	# the record and leaves after.
	bgrun wait "$id" >/dev/null
	wait_until 5 bash -c "! [[ -e /proc/$sup ]] || [[ \$(awk '{print \$3}' /proc/$sup/stat) == Z ]]" ||
		fail "the supervisor $sup outlived its job's record"
}

test_a_read_only_cgroup_tree_means_process_group_or_refusal() {
	in_container
	# Only this mount's flag (bind): the cgroup hierarchy is the host's too.
	mount -o remount,bind,ro "$CG" || fail "cannot make $CG read-only"
	trap 'mount -o remount,bind,rw "$CG"; "$BGRUN_SANDBOX_BGRUND" restart' EXIT
	restart_bgrund --containment-mode=report-only
	grep -q "cgroupfs: .*no writable cgroup v2 subtree; skipped" "$BGRUN_SANDBOX_LOG" ||
		fail "bgrund did not say why cgroupfs is off"
	out=$(bgrun run --wait -- 'echo ran; cat /proc/self/cgroup' 2>err) || fail "report-only run failed: $(cat err)"
	assert_contains "$out" ran output
	id=$(job_of_command 'echo ran; cat /proc/self/cgroup')
	rec=$(bgrun status "$id" --json)
	assert_eq process_group "$(jq -r .containment.mechanism <<<"$rec")" mechanism
	assert_eq false "$(jq -r .containment.contained <<<"$rec")" contained
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" dead

	restart_bgrund
	before=$(ls /var/lib/bgrun/jobs | wc -l)
	expect_fail bgrun run -- 'touch /run/must-not-exist'
	assert_contains "$ERR_OUT" "Containment refused" "enforcing mode's answer"
	busctl --address=unix:path=/run/bgrun/bus call org.bgrun.Runtime1 /org/bgrun/Runtime1 \
		org.bgrun.Runtime1.Manager Launch 'sssa{sv}' 'touch /run/must-not-exist' "" / 0 >out 2>&1 &&
		fail "Launch succeeded: $(cat out)"
	sleep 0.3
	[[ ! -e /run/must-not-exist ]] || fail "the refused command ran"
	assert_eq "$before" "$(ls /var/lib/bgrun/jobs | wc -l)" "job records"
}

test_limits_on_a_cgroup_without_controllers_are_said_so() {
	in_container
	ctl=$(cat "$CG/cgroup.subtree_control")
	id=$(bgrun run -p MemoryMax=64M -p TasksMax=32 -- 'sleep 30') || fail "launch failed"
	cg=$(job_cg "$id")
	if [[ $ctl == *memory* && $ctl == *pids* ]]; then
		assert_eq 67108864 "$(cat "$cg/memory.max")" memory.max
		assert_eq 32 "$(cat "$cg/pids.max")" pids.max
		echo "NOTE: memory and pids controllers enabled: MemoryMax and TasksMax enforced"
	else
		[[ ! -e $cg/memory.max && ! -e $cg/pids.max ]] || fail "limit files without the controllers"
		grep -q "cgroupfs: jobs get cgroups in / (controllers: ${ctl:-none})" "$BGRUN_SANDBOX_LOG" ||
			fail "bgrund did not log the controllers its job cgroups get"
		echo "NOTE: the cgroup v2 tree has no memory/pids controller ($BGRUN_CGROUP_V2): MemoryMax and TasksMax recorded, not enforced"
	fi
	bgrun kill "$id" >/dev/null
}

test_bgrund_killed_hard_comes_back_on_its_stale_socket_and_keeps_the_job() {
	in_container
	id=$(bgrun run -- 'sleep 1009') || fail "launch failed"
	wait_procs 2 "$(job_cg "$id")/payload" || fail "job not up"
	pid=$("$BGRUN_SANDBOX_BGRUND" pid)
	kill -KILL "$pid"
	wait_until 5 bash -c "! [[ -e /proc/$pid && \$(awk '{print \$3}' /proc/$pid/stat) != Z ]]" || fail "bgrund did not die"
	[[ -S /run/bgrun/bus ]] || fail "no stale socket to test with"
	expect_fail bgrun list
	"$BGRUN_SANDBOX_BGRUND" start || fail "bgrund did not start over its stale socket"
	assert_eq running "$(job_status "$id")" "status after bgrund was killed and started again"
	res=$(bgrun kill "$id" --json) || fail "kill failed"
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
}

# A job of a mechanism the configuration no longer names ends under a
# bgrund that never initialized that mechanism: it survives the end, and
# the job's cgroup, the one its grant names, is removed.
test_a_cgroupfs_job_ends_under_a_bgrund_configured_without_cgroupfs() {
	in_container
	ended=$(bgrun run -- 'while [ ! -e /run/bgrun-test-go ]; do sleep 0.05; done; exit 3') || fail "launch failed"
	lost=$(bgrun run -- 'sleep 1010') || fail "launch failed"
	wait_procs 1 "$(job_cg "$lost")/payload" || fail "job not up"
	sup=$(supervisor_pid "$lost")
	printf '%s\n' "[Runtime]" ContainmentMode=report-only Mechanisms=process_group >/run/bgrun-test.conf
	trap 'rm -f /run/bgrun-test.conf /run/bgrun-test-go; "$BGRUN_SANDBOX_BGRUND" restart' EXIT
	restart_bgrund --config=/run/bgrun-test.conf
	pid=$("$BGRUN_SANDBOX_BGRUND" pid)
	mechs=$(busctl --address=unix:path=/run/bgrun/bus get-property org.bgrun.Runtime1 /org/bgrun/Runtime1 \
		org.bgrun.Runtime1.Manager Mechanisms)
	assert_not_contains "$mechs" '"cgroupfs"' "Mechanisms in use after the restart"
	assert_eq running "$(job_status "$ended")" "status after the restart"
	assert_eq running "$(job_status "$lost")" "status after the restart"

	# One ends on its own: its supervisor publishes the end.
	touch /run/bgrun-test-go
	wait_until 10 bash -c "[[ \$(bgrun status $ended --json | jq -r .status) == exited ]]" ||
		fail "the job did not end: $(job_status "$ended")"
	[[ $("$BGRUN_SANDBOX_BGRUND" pid) == "$pid" ]] || fail "bgrund died when the job ended: $(tail -5 "$BGRUN_SANDBOX_LOG")"
	assert_eq 3 "$(jget "$ended" .exit_code)" "exit code"
	wait_until 5 test ! -d "$(job_cg "$ended")" || fail "$(job_cg "$ended") is left"

	# The other loses its supervisor: bgrund releases it through cgroupfs.
	kill -KILL "$sup"
	wait_until 10 bash -c "[[ \$(bgrun status $lost --json | jq -r .status) == failed ]]" ||
		fail "the job was not released: $(job_status "$lost")"
	[[ $("$BGRUN_SANDBOX_BGRUND" pid) == "$pid" ]] || fail "bgrund died in the release: $(tail -5 "$BGRUN_SANDBOX_LOG")"
	assert_eq true "$(jget "$lost" .teardown.dead)" "dead"
	wait_until 5 test ! -d "$(job_cg "$lost")" || fail "$(job_cg "$lost") is left"
}

# A damaged run.json after an upgrade: the supervisor is found in the
# supervisor/ cgroup of the job's cgroup, not by its replaced binary.
test_a_damaged_run_json_keeps_the_job_whose_cgroup_holds_its_supervisor() {
	in_container
	id=$(bgrun run -- 'sleep 1011') || fail "launch failed"
	wait_procs 1 "$(job_cg "$id")/payload" || fail "job not up"
	pid=$(jget "$id" .pid)
	sup=$(supervisor_pid "$id")
	printf 'garbage' >"/var/lib/bgrun/jobs/$id/run.json"
	exe=$(readlink "/proc/$sup/exe")
	cp "$exe" "$exe.new" && mv -f "$exe.new" "$exe" || fail "cannot replace $exe"
	restart_bgrund
	pid_alive "$pid" || fail "the job's command was killed"
	pid_alive "$sup" || fail "the job's supervisor was killed"
	assert_eq running "$(job_status "$id")" "status after the restart"
	res=$(bgrun kill "$id" --json) || fail "kill failed"
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	! pid_alive "$pid" || fail "the command survived the kill"
}
