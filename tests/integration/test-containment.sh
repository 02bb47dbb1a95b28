# SPDX-License-Identifier: MIT
# Grants, the process-group fallback, enforcing mode, supervisor setup
# failures and the reaper (issue #4).

test_twenty_concurrent_jobs_twenty_released_grants() {
	before=$(open_grants)
	seq 20 | xargs -P 20 -I{} bgrun run -- 'sleep 0.5; echo {}' >ids || fail "a launch failed"
	assert_eq 20 "$(sort -u ids | wc -l)" "distinct job ids"
	for id in $(cat ids); do
		g=$(grant_of "$id") || fail "job $id has no grant"
		assert_eq systemd "$(jq -r .mechanism <<<"$g")" "grant mechanism of $id"
		assert_eq "$ROOT_SLICE_CG/bgrun-job-$id.scope" "$(jq -r .cgroup <<<"$g")" "grant cgroup of $id"
	done
	for id in $(cat ids); do bgrun wait "$id" >/dev/null; done
	for id in $(cat ids); do
		g=$(grant_of "$id")
		assert_eq released "$(jq -r .state <<<"$g")" "grant state of $id"
		assert_eq true "$(jq -r .dead <<<"$g")" "grant dead of $id"
	done
	assert_eq "$before" "$(open_grants)" "open grants after all ended"
}

test_process_group_fallback_in_report_only_mode() {
	with_config ContainmentMode=report-only "Mechanisms=process_group"
	assert_eq '"report-only"' "$(busctl get-property "${MGR[0]}" "${MGR[1]}" "${MGR[2]}" ContainmentMode | cut -d' ' -f2)" mode
	id=$(bgrun run -- printf captured) || fail "launch failed"
	bgrun wait "$id" >/dev/null
	rec=$(bgrun status "$id" --json)
	assert_eq captured "$(bgrun logs "$id")" output
	assert_eq process_group "$(jq -r .containment.mechanism <<<"$rec")" mechanism
	assert_eq false "$(jq -r .containment.contained <<<"$rec")" contained
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" dead
	assert_eq 0 "$(jq -r .exit_code <<<"$rec")" exit_code
	assert_eq released "$(jq -r .state <<<"$(grant_of "$id")")" grant
	# Kill reaches the whole tree below the supervisor, setsid or not.
	id=$(bgrun run -- 'setsid sleep 311 & echo "pid $!"; echo "pid $$"; sleep 312')
	wait_until 5 bash -c "[[ \$(bgrun logs $id | grep -c '^pid') == 2 ]]" || fail "no pids reported"
	pids=$(bgrun logs "$id" | awk '/^pid/ {print $2}')
	res=$(bgrun kill "$id" --json)
	assert_eq true "$(jq -r .killed <<<"$res")" killed
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	for p in $pids; do ! pid_alive "$p" || fail "pid $p survived the kill"; done
}

test_enforcing_without_a_containing_mechanism_refuses() {
	with_config ContainmentMode=enforcing "Mechanisms=process_group"
	before=$(ls /var/lib/bgrun/jobs | wc -l)
	grants=$(open_grants)
	mkdir -p refused && cd refused
	expect_fail gcall Launch "'printf effect > must-not-exist'" "''" "'$PWD'" '@a{sv} {}'
	assert_contains "$ERR_OUT" org.bgrun.Runtime1.Error.ContainmentRefused "error"
	expect_fail bgrun run -- 'printf effect > must-not-exist'
	sleep 0.5
	[[ ! -e must-not-exist ]] || fail "the refused command ran"
	assert_eq "$before" "$(ls /var/lib/bgrun/jobs | wc -l)" "job records"
	assert_eq "$grants" "$(open_grants)" "open grants"
}

test_bad_configuration_is_refused_naming_file_line_key() {
	mkdir -p cfg.d
	printf '[Runtime]\n# comment\nContainmentMode=strict\n' >bad.conf
	expect_fail bgrund --check-config --config "$PWD/bad.conf"
	assert_contains "$ERR_OUT" "$PWD/bad.conf:3" "file and line"
	assert_contains "$ERR_OUT" "ContainmentMode" "key"
	out=$(bgrund --check-config --containment-mode report-only --config /dev/null) || fail "check-config failed"
	assert_contains "$out" "ContainmentMode=report-only" "flag overrides the file"
}

test_a_cwd_a_job_of_root_cannot_enter_runs_nothing() {
	# The job runs as root with no capabilities, so a directory of another
	# owner with mode 0700 cannot be entered. Its own process finds that
	# out, as the job's user, before anything of the command runs: the
	# Launch is refused and leaves no record (bgrund's loop never looks the
	# path up itself).
	locked=$(mktemp -d /var/tmp/bgrun-locked.XXXXXX)
	chown nobody "$locked"
	chmod 0700 "$locked"
	effect=/var/tmp/bgrun-effect.$$
	records=$(ls /var/lib/bgrun/jobs | wc -l)
	expect_fail bgrun run -C "$locked" -- "printf effect > $effect"
	assert_contains "$ERR_OUT" "cwd '$locked' does not exist or is not a directory that user root can enter" "the refusal"
	assert_eq "$records" "$(ls /var/lib/bgrun/jobs | wc -l)" "records after the refused Launch"
	sleep 0.3
	[[ ! -e $effect ]] || fail "the command's side effect happened"
	rm -rf "$locked"
}

test_supervisor_with_a_corrupt_spec_publishes_failure() {
	# A payload the supervisor cannot read: run it by hand on a private store.
	st=$(mktemp -d /var/tmp/bgrun-store.XXXXXX)
	mkdir -p "$st/jobs/corrupt123" && echo '{"id":' >"$st/jobs/corrupt123/spec.json"
	bgrun-supervisor --job corrupt123 --state-dir "$st" 2>err && fail "supervisor succeeded on a corrupt spec"
	res=$(cat "$st/jobs/corrupt123/result.json") || fail "no result published"
	assert_eq failed "$(jq -r .status <<<"$res")" status
	assert_eq false "$(jq -r .executed <<<"$res")" executed
	assert_eq true "$(jq -r .dead <<<"$res")" dead
	assert_eq 1 "$(jq -r .exit_code <<<"$res")" exit_code
	rm -rf "$st"
}

test_held_supervisor_runs_nothing_unless_in_its_scope() {
	# A real job's spec, replayed by hand on a private store with a command
	# that leaves a trace.
	id=$(bgrun run -- true) && bgrun wait "$id" >/dev/null || fail "launch failed"
	st=$(mktemp -d /var/tmp/bgrun-store.XXXXXX)
	mkdir -p "$st/jobs/$id" && touch "$st/jobs/$id/output"
	cp "/var/lib/bgrun/jobs/$id/grant.json" "$st/jobs/$id/" # names the scope's cgroup
	jq -c --arg c "touch $PWD/must-not-exist" '.command = $c' "/var/lib/bgrun/jobs/$id/spec.json" >"$st/jobs/$id/spec.json"
	# bgrund gone before the scope was ready: the go pipe closes.
	bgrun-supervisor --job "$id" --state-dir "$st" --go-fd 3 3< <(true) 2>err &&
		fail "a supervisor whose go pipe closed succeeded"
	[[ ! -e $st/jobs/$id/result.json && ! -e $st/jobs/$id/run.json ]] || fail "a supervisor that never went on wrote a record"
	# Let go, but not inside the job's scope (here: this shell's cgroup).
	bgrun-supervisor --job "$id" --state-dir "$st" --go-fd 3 3< <(printf G) 2>err &&
		fail "a supervisor outside its scope succeeded"
	res=$(cat "$st/jobs/$id/result.json") || fail "no result published"
	assert_eq false "$(jq -r .executed <<<"$res")" executed
	assert_contains "$(jq -r .reason <<<"$res")" "not in the job's scope" reason
	[[ ! -e must-not-exist ]] || fail "the command ran"
	rm -rf "$st"
}

test_reap_after_bgrund_and_a_supervisor_are_killed() {
	ids=()
	for i in 1 2 3 4; do ids+=("$(bgrun run -- "echo job$i; sleep 300")"); done
	lost=${ids[3]}
	sup=$(supervisor_pid "$lost")
	[[ $sup -gt 0 ]] || fail "no supervisor pid for $lost"
	old=$(bgrund_pid)
	systemctl reset-failed bgrund.service # earlier tests' restarts count toward the start limit
	kill -9 "$old" "$sup"
	wait_until 10 bash -c "[[ \$(systemctl show -P MainPID bgrund.service) != 0 && \$(systemctl show -P MainPID bgrund.service) != $old ]] && systemctl is-active -q bgrund" ||
		fail "bgrund did not come back"
	wait_until 5 busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.freedesktop.DBus.Peer Ping || fail "no answer"
	wait_until 10 bash -c "[[ \$(bgrun status $lost --json | jq -r .status) != running ]]" || fail "lost job still running"
	out=$(busctl --json=short call "${MGR[@]}" Reap)
	assert_eq 3 "$(jq -r '.data[0].background_kept.data' <<<"$out")" background_kept
	assert_eq 1 "$(jq -r '.data[0].released.data' <<<"$out")" released
	rec=$(bgrun status "$lost" --json)
	assert_eq failed "$(jq -r .status <<<"$rec")" "status of the lost job"
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" "dead of the lost job"
	[[ -z $(all_procs_below "$CG$ROOT_SLICE_CG/bgrun-job-$lost.scope") ]] ||
		fail "cgroup of the lost job still has processes"
	for id in "${ids[@]}"; do
		[[ -e /var/lib/bgrun/jobs/$id/spec.json ]] || fail "record of $id lost"
	done
	for id in "${ids[@]:0:3}"; do
		assert_eq running "$(job_status "$id")" "status of kept job $id"
		bgrun kill "$id" >/dev/null
	done
}

# The sandbox mounts /proc/sys read-only; a private proc instance of the
# same pid namespace gives a writable ns_last_pid for this pid namespace only.
private_proc() {
	mkdir -p proc.rw
	mount -t proc -o rw,nosuid,nodev,noexec proc proc.rw || return 1
	NS_LAST_PID=$PWD/proc.rw/sys/kernel/ns_last_pid
	[[ -w $NS_LAST_PID ]]
}

# impostor_at PID LOG: start a process that records every catchable signal
# in LOG, at exactly PID (via ns_last_pid, inside the sandbox's pid
# namespace). Prints the impostor's pid.
impostor_at() {
	local want=$1 log=$2 i got
	for ((i = 0; i < 50; i++)); do
		echo $((want - 1)) >"$NS_LAST_PID"
		bash -c 'for s in TERM INT HUP USR1 USR2 QUIT CONT; do trap "echo $s >>'"$log"'" $s; done; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &
		got=$!
		if [[ $got == "$want" ]]; then
			echo "$got"
			return 0
		fi
		kill -9 "$got"
		wait "$got" 2>/dev/null
	done
	return 1
}

# restart_with_impostor_at PID JOB: with bgrund stopped and JOB's process
# gone, put a signal-recording process at PID, start bgrund, Kill and Reap:
# the process must live and have received nothing.
restart_with_impostor_at() {
	local pid=$1 id=$2 log=$PWD/signals.log imp res
	imp=$(impostor_at "$pid" "$log") || { systemctl start bgrund; skip "could not place a process at pid $pid (pids busy)"; }
	systemctl start bgrund.service
	res=$(bgrun kill "$id" --json)
	assert_eq false "$(jq -r .killed <<<"$res")" "killed reported for a recycled pid"
	busctl call "${MGR[@]}" Reap >/dev/null
	sleep 0.3
	pid_alive "$imp" || fail "the process now at pid $imp was killed"
	[[ ! -s $log ]] || fail "the process now at pid $imp got signals: $(cat "$log")"
	kill -9 "$imp"
}

test_recycled_supervisor_pid_is_never_signalled() {
	private_proc || skip "cannot mount a private proc to write ns_last_pid"
	trap 'umount proc.rw' EXIT
	id=$(bgrun run -- 'sleep 300')
	sup=$(supervisor_pid "$id")
	systemctl stop bgrund.service
	# The supervisor first, so it dies without publishing a result (killed
	# together, it could see its command die and publish that end, which
	# bgrund then rightly keeps).
	kill -9 "$sup"
	wait_until 10 bash -c "! [[ -e /proc/$sup ]]" || fail "supervisor $sup did not die"
	systemctl kill -s KILL "bgrun-job-$id.scope"
	restart_with_impostor_at "$sup" "$id"
	assert_eq failed "$(job_status "$id")" "status of the job whose supervisor vanished"
}

test_recycled_process_group_leader_is_never_signalled() {
	private_proc || skip "cannot mount a private proc to write ns_last_pid"
	with_config ContainmentMode=report-only "Mechanisms=process_group"
	trap 'umount proc.rw; rm -f /etc/bgrun/bgrund.conf.d/90-test.conf; systemctl restart bgrund.service' EXIT
	id=$(bgrun run -- 'sleep 300')
	leader=$(jget "$id" .pid)
	sup=$(supervisor_pid "$id")
	systemctl stop bgrund.service
	# The whole job goes (its group holds the leader's pid while it lives).
	kill -9 "$sup" -- "-$leader"
	wait_until 10 bash -c "! [[ -e /proc/$leader || -e /proc/$sup ]]" || fail "leader $leader and supervisor $sup not reaped"
	restart_with_impostor_at "$leader" "$id"
}

test_kill_of_a_job_whose_supervisor_hangs() {
	id=$(bgrun run -- 'setsid sleep 321 & echo "pid $!"; echo "pid $$"; sleep 322')
	wait_until 5 bash -c "[[ \$(bgrun logs $id | grep -c '^pid') == 2 ]]" || fail "no pids reported"
	pids=$(bgrun logs "$id" | awk '/^pid/ {print $2}')
	sup=$(supervisor_pid "$id")
	kill -STOP "$sup"
	start=$(date +%s%N)
	res=$(bgrun kill "$id" --json) || fail "kill failed"
	ms=$((($(date +%s%N) - start) / 1000000))
	assert_eq true "$(jq -r .killed <<<"$res")" killed
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	assert_le "$ms" 15000 "ms until a kill with a stopped supervisor answered"
	for p in $pids; do ! pid_alive "$p" || fail "pid $p survived"; done
	assert_eq killed "$(job_status "$id")" status
	# The record completes once the supervisor that does not answer is
	# released (the kill watchdog), with the teardown the Kill answered.
	bgrun wait "$id" -t 15 >/dev/null || true
	! pid_alive "$sup" || fail "the stopped supervisor $sup survived"
	assert_eq "$(jq -r .teardown.confirmed_at <<<"$res")" "$(jget "$id" .teardown.confirmed_at)" confirmed_at
	assert_eq released "$(jq -r .state <<<"$(grant_of "$id")")" grant
}

# Kill answers at the confirmation; the record completes afterwards. A
# supervisor stopped before the Kill and killed after its answer never
# completes it: bgrund does, as the answer said.
test_kill_answered_then_its_supervisor_killed() {
	id=$(bgrun run -- 'sleep 323')
	wait_until 5 bash -c "[[ -s /var/lib/bgrun/jobs/$id/run.json ]]" || fail "not running"
	# Its teardown slot got its block while the job ran: the answer's write
	# only overwrites it.
	wait_until 5 bash -c "[[ \$(stat -c %s /var/lib/bgrun/jobs/$id/teardown) == 4096 ]]" ||
		fail "the teardown slot was not prepared: $(stat -c %s "/var/lib/bgrun/jobs/$id/teardown")"
	sup=$(supervisor_pid "$id")
	trap "kill -CONT $sup 2>/dev/null || true" EXIT
	kill -STOP "$sup"
	start=$(date +%s%N)
	res=$(bgrun kill "$id" --json) || fail "kill failed"
	ms=$((($(date +%s%N) - start) / 1000000))
	assert_le "$ms" 3000 "ms until Kill answered with its supervisor stopped (not the 5 s watchdog)"
	assert_eq true "$(jq -r .killed <<<"$res")" killed
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	assert_eq cgroup.kill "$(jq -r .teardown.method <<<"$res")" method
	answered_at=$(jq -r .teardown.confirmed_at <<<"$res")
	# No read contradicts the answer; the end's own fields wait for the end.
	rec=$(bgrun status "$id" --json)
	assert_eq killed "$(jq -r .status <<<"$rec")" "status after the answer"
	assert_eq "$answered_at" "$(jq -r .teardown.confirmed_at <<<"$rec")" "confirmed_at after the answer"
	assert_eq 0 "$(jq -r .finished_at <<<"$rec")" "finished_at before the record is final"
	assert_eq killed "$(bgrun list --json | jq -r --arg id "$id" '.[] | select(.id == $id) | .status')" "listed status"
	# Wait holds until the record is final: here its timeout answers.
	start=$(date +%s%N)
	out=$(gcall Wait "'$id'" "uint64 300000") || fail "Wait failed"
	assert_le 300 $((($(date +%s%N) - start) / 1000000)) "ms Wait held before its timeout"
	assert_contains "$out" "'finished_at': <uint64 0>" "Wait's record before the end"
	kill -9 "$sup"
	trap - EXIT
	wait_until 10 bash -c "[[ \$(bgrun status $id --json | jq -r .finished_at) != 0 ]]" || fail "the record was not completed"
	rec=$(bgrun status "$id" --json)
	assert_eq killed "$(jq -r .status <<<"$rec")" "final status"
	assert_eq "$answered_at" "$(jq -r .teardown.confirmed_at <<<"$rec")" "final confirmed_at"
	assert_eq cgroup.kill "$(jq -r .teardown.method <<<"$rec")" "final method"
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" "final dead"
	assert_eq "$answered_at" "$(jq -r .confirmed_at /var/lib/bgrun/jobs/"$id"/result.json)" "result.json's confirmed_at"
}

# job_with_stopped_supervisor COMMAND: a running job (id) whose supervisor
# (sup) is SIGSTOPped, and continued when the test ends.
job_with_stopped_supervisor() {
	id=$(bgrun run -- "$1")
	wait_until 5 bash -c "[[ -s /var/lib/bgrun/jobs/$id/run.json ]]" || fail "not running"
	sup=$(supervisor_pid "$id")
	trap "kill -CONT $sup 2>/dev/null || true" EXIT
	kill -STOP "$sup"
}

# The same supervisor, stopped before the Kill, and bgrund restarted after
# the answer: the rule for a supervisor that never completes the record
# holds across the restart (issue #30: finished_at stayed 0 for good).
test_kill_answered_then_bgrund_restarted_completes_the_record() {
	job_with_stopped_supervisor 'sleep 325'
	res=$(bgrun kill "$id" --json) || fail "kill failed"
	answered_at=$(jq -r .teardown.confirmed_at <<<"$res")
	systemctl restart bgrund.service || fail "restart bgrund"
	assert_eq 0 "$(bgrun status "$id" --json | jq -r .finished_at)" "finished_at right after the restart"
	# Released within the rule's 5 s of the restart, as the answer said.
	out=$(bgrun wait "$id" -t 15 --json) || true
	rec=$(bgrun status "$id" --json)
	[[ $(jq -r .finished_at <<<"$rec") != 0 ]] || fail "the record was never completed after the restart: $rec"
	assert_eq killed "$(jq -r .status <<<"$rec")" "final status"
	assert_eq "$answered_at" "$(jq -r .teardown.confirmed_at <<<"$rec")" "final confirmed_at: the answer's"
	! pid_alive "$sup" || fail "the stopped supervisor $sup survived"
	gcall Forget "'$id'" >/dev/null || fail "Forget after the record completed"
	trap - EXIT
}

# "kill, then forget" never fails: a Forget between the Kill's answer and
# the final record is held until the record is final.
test_forget_after_kill_waits_for_the_final_record() {
	job_with_stopped_supervisor 'sleep 324'
	bgrun kill "$id" >/dev/null || fail "kill failed"
	(
		rc=0
		gcall Forget "'$id'" >forget.out 2>&1 || rc=$?
		echo "rc=$rc" >>forget.out
	) &
	fp=$!
	sleep 0.3
	[[ ! -s forget.out ]] || fail "Forget answered before the record was final: $(cat forget.out)"
	[[ -d /var/lib/bgrun/jobs/$id ]] || fail "the record went before it was final"
	kill -9 "$sup"
	trap - EXIT
	wait "$fp"
	assert_contains "$(cat forget.out)" "rc=0" "Forget's answer"
	[[ ! -e /var/lib/bgrun/jobs/$id ]] || fail "the record of $id is still on disk"
	rm -f forget.out
}

test_report_only_falls_back_when_systemd_refuses_the_unit() {
	with_config ContainmentMode=report-only "Mechanisms=systemd process_group"
	# An owner's slice whose start asserts something false fails every job
	# unit's start job: systemd refuses the unit, nothing of it runs.
	# (The drop-in goes in the sandbox's own unit path, beside bgrund's.)
	dropin=$(dirname "$(systemctl show -P FragmentPath bgrund.service)")/$ROOT_SLICE.d
	restore="rm -rf '$dropin'; systemctl daemon-reload; rm -f /etc/bgrun/bgrund.conf.d/90-test.conf; systemctl reset-failed bgrund.service; systemctl restart bgrund.service"
	trap "$restore" EXIT
	mkdir -p "$dropin"
	printf '[Unit]\nAssertPathExists=/nonexistent/bgrun-test\n' >"$dropin/refuse.conf"
	systemctl daemon-reload
	systemctl stop "$ROOT_SLICE"
	id=$(bgrun run -- 'echo fell back') || fail "launch failed"
	bgrun wait "$id" >/dev/null
	assert_eq "fell back" "$(bgrun logs "$id")" "output, run exactly once"
	assert_eq process_group "$(jget "$id" .containment.mechanism)" mechanism
	assert_eq false "$(jget "$id" .containment.contained)" contained
	assert_eq process_group "$(jq -r .mechanism <<<"$(grant_of "$id")")" "grant mechanism"
	# The same refusal in enforcing mode runs nothing.
	with_config ContainmentMode=enforcing "Mechanisms=systemd process_group"
	trap "$restore" EXIT
	expect_fail gcall Launch "'touch $PWD/must-not-exist'" "''" "'$PWD'" '@a{sv} {}'
	assert_contains "$ERR_OUT" ContainmentRefused "error in enforcing mode"
	sleep 0.3
	[[ ! -e must-not-exist ]] || fail "a refused command ran"
}

test_scope_without_a_record_is_killed_at_start() {
	# A job scope that no record accounts for (its record lost while bgrund
	# was down) is killed when bgrund starts, and Reap counts it.
	id=$(bgrun run -- 'setsid sleep 301 & sleep 302') || fail "launch failed"
	pid=$(jget "$id" .pid)
	scope=bgrun-job-$id.scope
	systemctl stop bgrund.service
	rm -rf "/var/lib/bgrun/jobs/$id"
	systemctl reset-failed bgrund.service # earlier tests' restarts count toward the start limit
	systemctl start bgrund.service
	wait_until 10 bash -c "! systemctl is-active -q $scope" || fail "$scope still active"
	! pid_alive "$pid" || fail "the orphan's process $pid survived"
	[[ -z $(pgrep -f 'sleep 30[12]') ]] || fail "a process of the orphan survived: $(pgrep -af 'sleep 30[12]')"
	out=$(busctl --json=short call "${MGR[@]}" Reap)
	(($(jq -r '.data[0].orphans_killed.data' <<<"$out") >= 1)) || fail "Reap does not count the orphan: $out"
}
