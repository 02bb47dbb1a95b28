# SPDX-License-Identifier: MIT
# Job control people expect (issue #12): sessions, graceful stops, input,
# terminals.

test_kill_session_kills_exactly_the_callers_jobs_of_that_session() {
	ensure_user alice
	ensure_user bob
	BGRUN=$(command -v bgrun)
	a1=$(as_user alice "$BGRUN" run -C / -s s1 -- 'sleep 300') || fail "launch a1"
	a2=$(as_user alice "$BGRUN" run -C / -s s1 -- 'setsid sleep 300 & sleep 300') || fail "launch a2"
	a3=$(as_user alice "$BGRUN" run -C / -s s2 -- 'sleep 300') || fail "launch a3"
	b1=$(as_user bob "$BGRUN" run -C / -s s1 -- 'sleep 300') || fail "launch b1"
	out=$(as_user alice gdbus call --system --dest org.bgrun.Runtime1 --object-path /org/bgrun/Runtime1 \
		--method org.bgrun.Runtime1.Manager.KillSession s1) || fail "KillSession failed: $out"
	assert_contains "$out" "'killed': <uint32 2>" "killed count"
	assert_contains "$out" "'dead': <true>" "dead, every one confirmed"
	for id in "$a1" "$a2"; do
		assert_eq killed "$(as_user alice "$BGRUN" status "$id" --json | jq -r .status)" "status of $id"
	done
	assert_eq running "$(as_user alice "$BGRUN" status "$a3" --json | jq -r .status)" "alice's job in another session"
	assert_eq running "$(as_user bob "$BGRUN" status "$b1" --json | jq -r .status)" "bob's job in the same session"
	# Root is an admin, yet KillSession is its own jobs only.
	out=$(gcall KillSession "'s1'") || fail "KillSession as root failed: $out"
	assert_contains "$out" "'killed': <uint32 0>" "root's KillSession counts only root's jobs"
	assert_eq running "$(as_user bob "$BGRUN" status "$b1" --json | jq -r .status)" "bob's job after root's KillSession"
	expect_fail gcall KillSession "''"
	assert_contains "$ERR_OUT" InvalidArgs "an empty session"
	as_user alice "$BGRUN" kill "$a3" >/dev/null
	as_user bob "$BGRUN" kill "$b1" >/dev/null
}

# launch CMD [GVARIANT-OPTIONS]: Launch as root through the bus (the option
# names as the contract spells them), print the job id.
launch() {
	local out
	out=$(gcall Launch "'$1'" "'jobctl'" "'/'" "${2:-@a{sv\} {\}}") || fail "Launch failed: $out"
	sed -E "s/^\('([a-z0-9]+)'.*/\1/" <<<"$out"
}

# wait_output ID TEXT: until the job's output holds TEXT (a job says when it
# is ready, so that a signal does not come before its trap is set).
wait_output() {
	wait_until 10 grep -q "$2" <(bgrun logs "$1") || fail "job $1 never printed '$2': $(bgrun logs "$1" | head -c 300)"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

test_stop_runs_the_jobs_trap_and_ends_by_its_signal() {
	f=/tmp/stop-trap-$$
	rm -f "$f"
	id=$(launch "trap \"echo cleaned > $f; exit 0\" TERM; echo ready; sleep 300")
	wait_output "$id" ready
	out=$(gcall Stop "'$id'" "{}") || fail "Stop failed: $out"
	assert_contains "$out" "'killed': <true>" "Stop's answer"
	assert_contains "$out" "'dead': <true>" "Stop's answer"
	assert_contains "$out" "'method': <'signal'>" "Stop's answer: ended within the grace"
	assert_eq cleaned "$(cat "$f" 2>/dev/null)" "the trap ran"
	assert_eq killed "$(job_status "$id")" status
	assert_eq 0 "$(jget "$id" .exit_code)" "exit code: the trap's exit 0"
	assert_eq signal "$(jget "$id" .teardown.method)" teardown.method
	assert_eq true "$(jget "$id" .teardown.dead)" teardown.dead
	assert_eq "" "$(all_procs_below "$CG$ROOT_SLICE_CG/bgrun-job-$id.scope/payload")" "processes left"
	rm -f "$f"
}

test_stop_of_a_job_ignoring_its_signal_kills_it_after_the_grace() {
	id=$(launch "trap \"\" TERM; echo ready; sleep 300")
	wait_output "$id" ready
	t0=$(now_ms)
	out=$(gcall Stop "'$id'" "{'GraceUSec': <uint64 1000000>}") || fail "Stop failed: $out"
	ms=$(($(now_ms) - t0))
	((ms >= 1000)) || fail "Stop answered after $ms ms, before the 1 s grace was over"
	assert_le "$ms" 3000 "Stop's answer (ms) after a 1 s grace"
	assert_contains "$out" "'dead': <true>" "Stop's answer"
	assert_contains "$out" "'method': <'cgroup.kill'>" "Stop's answer: the grace ran out"
	assert_eq killed "$(job_status "$id")" status
	assert_eq 9 "$(jget "$id" .signal)" "signal: killed after the grace"
	echo "NOTE: Stop with a 1 s grace of a job ignoring SIGTERM answered in $ms ms"
}

test_stop_with_no_grace_kills_at_once() {
	f=/tmp/stop-nograce-$$
	rm -f "$f"
	id=$(launch "trap \"echo cleaned > $f\" TERM; echo ready; sleep 300" "{'StopGraceUSec': <uint64 0>}")
	wait_output "$id" ready
	t0=$(now_ms)
	out=$(gcall Stop "'$id'" "{}") || fail "Stop failed: $out"
	ms=$(($(now_ms) - t0))
	assert_le "$ms" 1000 "Stop with a grace of 0 (ms)"
	assert_contains "$out" "'method': <'cgroup.kill'>" "Stop's answer"
	[[ ! -e $f ]] || fail "the trap ran: no signal but SIGKILL was to be sent"
	assert_eq 9 "$(jget "$id" .signal)" signal
	assert_eq killed "$(job_status "$id")" status
}

test_stop_options_are_checked() {
	id=$(launch "sleep 300")
	expect_fail gcall Stop "'$id'" "{'GraceUSec': <uint64 600000001>}"
	assert_contains "$ERR_OUT" InvalidArgs "a grace over 10 min"
	expect_fail gcall Stop "'$id'" "{'Signal': <int32 19>}"
	assert_contains "$ERR_OUT" InvalidArgs "SIGSTOP as a stop signal"
	expect_fail gcall Stop "'$id'" "{'Nope': <int32 1>}"
	assert_contains "$ERR_OUT" InvalidArgs "an unknown option"
	assert_eq running "$(job_status "$id")" "the job after refused Stops"
	bgrun kill "$id" >/dev/null
}

test_timeout_runs_the_jobs_trap_and_is_timed_out() {
	f=/tmp/timeout-trap-$$
	rm -f "$f"
	id=$(launch "trap \"echo cleaned > $f; exit 3\" TERM; echo ready; sleep 300" "{'MaxRuntimeUSec': <uint64 1000000>}")
	out=$(gcall Wait "'$id'" "uint64 20000000") || fail "Wait failed: $out"
	assert_eq timed_out "$(job_status "$id")" status
	assert_eq true "$(jget "$id" .timed_out)" timed_out
	assert_eq 3 "$(jget "$id" .exit_code)" "exit code: the trap's"
	assert_eq signal "$(jget "$id" .teardown.method)" teardown.method
	assert_eq true "$(jget "$id" .teardown.dead)" teardown.dead
	assert_eq cleaned "$(cat "$f" 2>/dev/null)" "the trap ran"
	rm -f "$f"
}

test_timeout_of_a_job_ignoring_its_signal_kills_it_after_the_grace() {
	t0=$(now_ms)
	id=$(launch "trap \"\" TERM; sleep 300" "{'MaxRuntimeUSec': <uint64 1000000>, 'StopGraceUSec': <uint64 1000000>}")
	out=$(gcall Wait "'$id'" "uint64 20000000") || fail "Wait failed: $out"
	ms=$(($(now_ms) - t0))
	((ms >= 2000)) || fail "ended after $ms ms, before the limit (1 s) and the grace (1 s)"
	assert_le "$ms" 4500 "the end (ms) of a 1 s limit with a 1 s grace"
	assert_eq timed_out "$(job_status "$id")" status
	assert_eq cgroup.kill "$(jget "$id" .teardown.method)" teardown.method
	assert_eq true "$(jget "$id" .teardown.dead)" teardown.dead
	assert_eq 9 "$(jget "$id" .signal)" signal
	echo "NOTE: a 1 s limit with a 1 s grace ended the job after $ms ms (Launch to Wait's answer)"
}

test_stop_signal_is_the_jobs_own_and_reaches_every_process() {
	# StopSignal=SIGUSR1 (10; a background job of sh ignores SIGINT); a child that left the process group with setsid
	# gets it too: every process of the cgroup is signalled.
	f=/tmp/stop-usr1-$$
	rm -f "$f"
	script=/tmp/stop-usr1-$$.sh
	cat >"$script" <<-EOS
		setsid sh -c 'trap "echo child >> $f; exit 0" USR1; echo child-ready; sleep 300 & wait' &
		trap "echo parent >> $f; exit 0" USR1
		echo ready
		sleep 300 & wait
	EOS
	id=$(launch "sh $script" "{'StopSignal': <int32 10>}")
	wait_output "$id" ready
	wait_output "$id" child-ready
	out=$(gcall Stop "'$id'" "{}") || fail "Stop failed: $out"
	assert_contains "$out" "'method': <'signal'>" "Stop's answer"
	assert_eq "child parent" "$(sort "$f" | tr '\n' ' ' | sed 's/ $//')" "both traps ran"
	rm -f "$f" "$script"
}

test_stop_under_the_process_group_mechanism_runs_the_trap() {
	with_config ContainmentMode=report-only Mechanisms=process_group
	f=/tmp/stop-tree-$$
	rm -f "$f"
	id=$(launch "trap \"echo cleaned > $f; exit 0\" TERM; echo ready; sleep 300")
	assert_eq process_group "$(jget "$id" .containment.mechanism)" mechanism
	wait_output "$id" ready
	out=$(gcall Stop "'$id'" "{}") || fail "Stop failed: $out"
	assert_contains "$out" "'dead': <true>" "Stop's answer"
	assert_contains "$out" "'method': <'signal'>" "Stop's answer"
	assert_eq cleaned "$(cat "$f" 2>/dev/null)" "the trap ran"
	id=$(launch "trap \"\" TERM; echo ready; sleep 300")
	wait_output "$id" ready
	out=$(gcall Stop "'$id'" "{'GraceUSec': <uint64 300000>}") || fail "Stop failed: $out"
	assert_contains "$out" "'method': <'process-tree'>" "Stop's answer: the grace ran out"
	assert_eq 9 "$(jget "$id" .signal)" signal
	rm -f "$f"
}
