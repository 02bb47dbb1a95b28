# SPDX-License-Identifier: MIT
# Queued jobs (issue #38): Launch's Queue and MaxParallel. A job that would
# pass its owner's MaxRunningJobs= or its session's MaxParallel is recorded
# queued and answered at once; it starts in launch order as room comes, and
# the queue is bgrund's state, kept across its restarts and crashes. Each
# test checks what the records say (started_at, finished_at, status,
# teardown) or what the commands wrote, never a latency but one ratio
# measured in the same test.

DROPIN=/etc/bgrun/bgrund.conf.d/91-queue.conf

restart_bgrund() {
	systemctl reset-failed bgrund.service 2>/dev/null
	systemctl restart bgrund.service
}

# limits KEY=VALUE...: a [Limits] drop-in for the rest of the test.
limits() {
	mkdir -p "${DROPIN%/*}"
	printf '%s\n' "[Limits]" "$@" >"$DROPIN"
	on_exit "rm -f $DROPIN; restart_bgrund"
	restart_bgrund || fail "bgrund did not restart with [Limits] $*"
}

# Every job of SESSION's, of any owner, killed (the queued ones taken out).
kill_session() { # SESSION
	local id
	for id in $(bgrun list -s "$1" --json 2>/dev/null | jq -r '.[] | select(.status == "running" or .status == "queued") | .id'); do
		bgrun kill "$id" >/dev/null 2>&1
	done
}

# A job of root's that holds session SESSION's one place until killed.
blocker() { # SESSION
	bgrun run -s "$1" --queue --parallel 1 -- 'sleep 300'
}

# The records of SESSION's jobs as one JSON array (list --json carries
# started_at, finished_at and exit_code).
session_records() { bgrun list -s "$1" --json; }

test_forty_jobs_run_four_at_a_time_in_launch_order() {
	local session=queue-shards-$$ ids=() id i
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	# Each job holds its place until its own gate opens, or the common one:
	# however slow the machine, all forty are launched before the first ends.
	local gates=$PWD/gates
	mkdir -p "$gates"
	for ((i = 0; i < 40; i++)); do
		id=$(bgrun run --queue --parallel 4 -s "$session" --call-timeout 5s -- \
			"while [ ! -e $gates/$i ] && [ ! -e $gates/all ]; do sleep 0.05; done") || fail "launch $i"
		ids+=("$id")
	done
	assert_eq 4 "$(bgrun list -s "$session" --status running | tail -n +2 | wc -l)" "jobs running at once at first"
	assert_eq 36 "$(bgrun list -s "$session" --status queued | tail -n +2 | wc -l)" "jobs queued at first"
	assert_eq 1 "$(jget "${ids[4]}" .queue_position)" "the fifth job's place"
	assert_eq 0 "$(jget "${ids[4]}" .started_at)" "a queued job's started_at"
	# Launch order, one end at a time: the job that takes the freed place is
	# the next one launched. (bgrund lets jobs go in that order; when each
	# then execs is the kernel's, so started_at alone cannot tell it: a job
	# let go later can exec before a slower one let go earlier.)
	running_set() { bgrun list -s "$session" --status running --json | jq -r '[.[].id] | sort | join(" ")'; }
	local expected
	for ((i = 0; i < 20; i++)); do
		touch "$gates/$i"
		expected=$(printf '%s\n' "${ids[@]:i+1:4}" | sort | paste -sd ' ')
		wait_until_eq 30 "$expected" running_set ||
			fail "after job $i ended, the running jobs are '$(running_set)', not jobs $((i + 1)) to $((i + 4)) in launch order"
	done
	# The rest at once: places free several at a time.
	touch "$gates/all"
	bgrun wait -t 120s "${ids[@]}" >/dev/null || fail "the jobs did not all end"
	local records
	records=$(session_records "$session")
	assert_eq 40 "$(jq '[.[] | select(.exit_code == 0)] | length' <<<"$records")" "jobs that exited 0"
	# Never more than four at once: from the records' own times, an end
	# counted before a start at the same moment.
	local most
	most=$(jq '[.[] | [.started_at, 1], [.finished_at, -1]] | sort_by(.[0], .[1])
		| reduce .[] as $e ({n: 0, most: 0}; .n += $e[1] | .most = ([.most, .n] | max)) | .most' <<<"$records")
	assert_eq 4 "$most" "jobs that ran at once, at most"
}

test_max_running_jobs_with_queue_queues_the_fourth_and_starts_it_when_one_ends() {
	setup_users
	limits MaxRunningJobs=3
	on_exit "for i in \$(bgrun list --json | jq -r '.[] | select(.status == \"running\" or .status == \"queued\") | .id'); do bgrun kill \$i >/dev/null 2>&1; done"
	local a=() i q
	for i in 1 2 3; do
		a+=("$(as_user alice "$BGRUN" run -C /tmp -- 'sleep 300')") || fail "alice's launch $i"
	done
	# Without Queue: refused, as before.
	expect_fail as_user alice "$BGRUN" run -C /tmp -- 'sleep 300'
	assert_contains "$ERR_OUT" "MaxRunningJobs=3" "a 4th launch without --queue"
	q=$(as_user alice "$BGRUN" run -C /tmp --queue -- 'echo started') || fail "alice's queued launch"
	assert_eq queued "$(job_status "$q")" "the 4th job with --queue"
	assert_eq 1 "$(jget "$q" .queue_position)" "its place"
	assert_contains "$(bgrun status "$q")" "queued (1 in its queue)" "status says its place"
	# The limit is alice's: bob's jobs start.
	local b
	b=$(as_user bob "$BGRUN" run -C /tmp --queue -- 'true') || fail "bob's launch"
	bgrun wait -t 10s "$b" >/dev/null
	assert_eq exited "$(job_status "$b")" "bob's job, queued behind nothing of his"
	as_user alice "$BGRUN" kill "${a[0]}" >/dev/null || fail "kill"
	wait_until_eq 10 exited job_status "$q" || fail "the queued job did not run once one ended: $(job_status "$q")"
	assert_eq "started" "$(bgrun logs "$q")" "its output"
	assert_eq true "$(jget "$q" .containment.executed)" "it ran"
}

test_queued_jobs_survive_a_restart_and_a_sigkill_of_bgrund() {
	local session=queue-restart-$$ f=/run/bgrun-test-queue-restart blocker_id ids=() i old
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	rm -f "$f"
	on_exit "rm -f $f"
	blocker_id=$(blocker "$session") || fail "blocker"
	for ((i = 1; i <= 20; i++)); do
		ids+=("$(bgrun run -s "$session" --queue --parallel 1 -- "echo $i >> $f")") || fail "launch $i"
	done
	assert_eq 20 "$(bgrun list -s "$session" --status queued | tail -n +2 | wc -l)" "queued before the restart"
	restart_bgrund || fail "restart"
	assert_eq 20 "$(bgrun list -s "$session" --status queued | tail -n +2 | wc -l)" "queued after a restart"
	assert_eq 20 "$(jget "${ids[19]}" .queue_position)" "the last one's place after a restart"
	old=$(bgrund_pid)
	kill -9 "$old"
	wait_until 10 bash -c "[[ \$(systemctl show -P MainPID bgrund.service) != 0 && \$(systemctl show -P MainPID bgrund.service) != $old ]] && systemctl is-active -q bgrund" ||
		fail "bgrund did not come back after SIGKILL"
	wait_until 5 busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.freedesktop.DBus.Peer Ping || fail "bgrund does not answer"
	assert_eq 20 "$(bgrun list -s "$session" --status queued | tail -n +2 | wc -l)" "queued after a SIGKILL"
	assert_eq running "$(job_status "$blocker_id")" "the running job"
	bgrun kill "$blocker_id" >/dev/null || fail "kill the blocker"
	bgrun wait -t 60s "${ids[@]}" >/dev/null || fail "the queued jobs did not end"
	assert_eq "$(seq 1 20)" "$(cat "$f")" "what the jobs wrote: each once, in launch order"
}

# A crash just after a queued job was taken off its queue, before its
# supervisor was let go: the store then holds the job with its marker
# (the held supervisor ran nothing), and it is queued again, run once.
test_a_job_taken_off_the_queue_by_a_crash_runs_once() {
	local session=queue-crash-$$ f=/run/bgrun-test-queue-crash blocker_id id
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	rm -f "$f"
	on_exit "rm -f $f"
	blocker_id=$(blocker "$session") || fail "blocker"
	id=$(bgrun run -s "$session" --queue --parallel 1 -- "echo ran >> $f") || fail "launch"
	[[ -e /var/lib/bgrun/jobs/$id/queued ]] || fail "no queued marker in its record"
	# Frozen, bgrund cannot start it; the blocker's end makes room, and a
	# SIGKILL of the frozen bgrund is its crash (whatever it had begun).
	stop_bgrund
	kill -9 "$(supervisor_pid "$blocker_id")" 2>/dev/null
	kill -9 "$BGRUND"
	kill -CONT "$BGRUND" 2>/dev/null
	wait_until 10 bash -c "[[ \$(systemctl show -P MainPID bgrund.service) != 0 && \$(systemctl show -P MainPID bgrund.service) != $BGRUND ]] && systemctl is-active -q bgrund" ||
		fail "bgrund did not come back after SIGKILL"
	bgrun wait -t 30s "$id" >/dev/null || fail "the queued job did not end"
	assert_eq exited "$(job_status "$id")" "the job"
	assert_eq ran "$(cat "$f")" "what it wrote: once"
	[[ ! -e /var/lib/bgrun/jobs/$id/queued ]] || fail "its marker outlived its start"
}

test_kill_of_a_queued_job_never_starts_it() {
	local session=queue-kill-$$ f=/run/bgrun-test-queue-kill blocker_id id after
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	rm -f "$f"
	on_exit "rm -f $f"
	blocker_id=$(blocker "$session") || fail "blocker"
	id=$(bgrun run -s "$session" --queue --parallel 1 -- "touch $f") || fail "launch"
	after=$(bgrun run -s "$session" --queue --parallel 1 -- true) || fail "launch"
	assert_eq 2 "$(jget "$after" .queue_position)" "the second's place"
	bgrun kill "$id" >/dev/null || fail "kill of a queued job"
	assert_eq killed "$(job_status "$id")" "status"
	assert_eq false "$(jget "$id" .containment.executed)" "executed"
	assert_eq true "$(jget "$id" .teardown.dead)" "teardown.dead"
	assert_eq never-started "$(jget "$id" .teardown.method)" "teardown.method"
	assert_eq killed "$(bgrun list -s "$session" --json | jq -r --arg id "$id" '.[] | select(.id == $id) | .status')" \
		"its status in a listing"
	assert_eq 1 "$(jget "$after" .queue_position)" "the second's place once the first is out"
	bgrun kill "$blocker_id" >/dev/null || fail "kill the blocker"
	bgrun wait -t 30s "$after" >/dev/null || fail "the job behind it did not run"
	[[ ! -e $f ]] || fail "the killed job ran"
	# A session's kill takes its queued jobs too.
	blocker_id=$(blocker "$session") || fail "blocker"
	id=$(bgrun run -s "$session" --queue --parallel 1 -- "touch $f") || fail "launch"
	bgrun kill --session "$session" >/dev/null || fail "kill --session"
	assert_eq killed "$(job_status "$id")" "a queued job after kill --session"
	assert_eq killed "$(job_status "$blocker_id")" "the running one"
	[[ ! -e $f ]] || fail "the job killed with its session ran"
}

test_wait_on_a_queued_job_returns_its_end() {
	local session=queue-wait-$$ blocker_id id rc
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	blocker_id=$(blocker "$session") || fail "blocker"
	id=$(bgrun run -s "$session" --queue --parallel 1 -- 'exit 3') || fail "launch"
	(bgrun wait "$id" >/dev/null; echo $? >wait.rc) &
	sleep 0.5
	[[ ! -e wait.rc ]] || fail "wait returned while the job was queued"
	bgrun kill "$blocker_id" >/dev/null || fail "kill the blocker"
	wait_until 30 test -s wait.rc || fail "wait did not return"
	assert_eq exited "$(job_status "$id")" "status"
	assert_eq 3 "$(jget "$id" .exit_code)" "exit_code"
	# run --queue --wait waits through the queue too, with the job's status.
	blocker_id=$(blocker "$session") || fail "blocker"
	(bgrun run -q --wait -s "$session" --queue --parallel 1 -- 'exit 5'; echo $? >run.rc) &
	sleep 0.5
	[[ ! -e run.rc ]] || fail "run --wait returned while the job was queued"
	bgrun kill "$blocker_id" >/dev/null || fail "kill the blocker"
	wait_until 30 test -s run.rc || fail "run --wait did not return"
	assert_eq 5 "$(cat run.rc)" "run --queue --wait's exit status"
}

test_a_bound_queued_job_whose_caller_leaves_never_starts() {
	local session=queue-bound-$$ f=/run/bgrun-test-queue-bound blocker_id id
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	rm -f "$f"
	on_exit "rm -f $f"
	blocker_id=$(blocker "$session") || fail "blocker"
	# busctl's connection closes once Launch answers: the caller is gone.
	id=$(busctl call "${MGR[@]}" Launch 'sssa{sv}' "touch $f" "$session" / 3 Queue b true MaxParallel u 1 \
		BindToCaller b true | sed -n 's/^so "\([^"]*\)".*/\1/p')
	[[ -n $id ]] || fail "no job"
	wait_until_eq 10 killed job_status "$id" || fail "the bound queued job was not taken out: $(job_status "$id")"
	assert_eq never-started "$(jget "$id" .teardown.method)" "teardown.method"
	bgrun kill "$blocker_id" >/dev/null
	bgrun wait -t 30s "$blocker_id" >/dev/null
	sleep 0.5
	[[ ! -e $f ]] || fail "the bound job ran"
}

test_what_only_the_start_can_tell_ends_a_queued_job_failed() {
	local session=queue-fail-$$ blocker_id id
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	mkdir -p /run/bgrun-test-queue-gone
	blocker_id=$(blocker "$session") || fail "blocker"
	id=$(bgrun run -s "$session" --queue --parallel 1 -C /run/bgrun-test-queue-gone -- true) || fail "launch"
	rmdir /run/bgrun-test-queue-gone
	bgrun kill "$blocker_id" >/dev/null || fail "kill the blocker"
	bgrun wait -t 30s "$id" >/dev/null
	assert_eq failed "$(job_status "$id")" "a queued job whose cwd went"
	assert_eq InvalidArgs "$(jget "$id" .failure)" "failure"
	assert_eq false "$(jget "$id" .containment.executed)" "executed"
	assert_contains "$(jget "$id" .teardown.method)" "not-started" "teardown.method"
}

test_queue_options_are_checked_before_anything_is_queued() {
	expect_fail bgrun run --queue --tty --wait -- true
	assert_contains "$ERR_OUT" "--queue cannot go with --tty" "--queue --tty"
	expect_fail bgrun run --parallel 2 -- true
	assert_contains "$ERR_OUT" "--parallel needs -s SESSION" "--parallel without a session"
	local out
	out=$(busctl call "${MGR[@]}" Launch 'sssa{sv}' true "" / 1 MaxParallel u 2 2>&1)
	assert_contains "$out" "MaxParallel needs a session" "MaxParallel in the session \"\""
	out=$(busctl call "${MGR[@]}" Launch 'sssa{sv}' true s / 2 Queue b true Tty b true 2>&1)
	assert_contains "$out" "Queue cannot be given with Tty=true" "Queue with Tty"
	out=$(busctl call "${MGR[@]}" Launch 'sssa{sv}' true s / 1 MaxParallel u 0 2>&1)
	assert_contains "$out" "MaxParallel must be from 1" "MaxParallel=0"
	# MaxParallel without Queue: past it, LimitExceeded, nothing started.
	local session=queue-noqueue-$$ blocker_id
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	blocker_id=$(blocker "$session") || fail "blocker"
	on_exit "bgrun kill $blocker_id >/dev/null 2>&1"
	expect_fail bgrun run -s "$session" --parallel 1 -- true
	assert_contains "$ERR_OUT" "MaxParallel=1 reached" "a launch past MaxParallel without --queue"
	assert_eq 1 "$(bgrun list -s "$session" | tail -n +2 | wc -l)" "jobs of the session"
	# A session held by its limit holds back no other session of its owner.
	local other
	other=$(bgrun run -s "other-$session" --queue --parallel 1 -- true) || fail "launch in another session"
	bgrun wait -t 10s "$other" >/dev/null
	assert_eq exited "$(job_status "$other")" "a job of another session"
}

# One owner's full queue: MaxQueuedJobs= refuses the next, and another
# owner's Launch answers as fast (within 2x) as on an idle bgrund.
test_a_full_queue_is_its_owners_alone() {
	setup_users
	local session=queue-full-$$ out blocker_id idle busy
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	blocker_id=$(as_user alice "$BGRUN" run -C /tmp -s "$session" --queue --parallel 1 -- 'sleep 300') || fail "blocker"
	on_exit "bgrun kill --session $session >/dev/null 2>&1; as_user alice $BGRUN kill --session $session >/dev/null 2>&1"
	idle=$(bob_launch_time)
	out=$(as_user alice /usr/bin/python3 "$CLIENTS_DIR/queue-fill.py" 1001 "$session")
	assert_eq 1000 "$(head -1 <<<"$out")" "alice's queued launches of 1001"
	assert_contains "$out" "MaxQueuedJobs=1000 reached" "the 1001st"
	busy=$(bob_launch_time)
	echo "bob's Launch: ${idle} us idle, ${busy} us with alice's queue full" >&2
	((busy <= 2 * idle)) || fail "bob's Launch took ${busy} us with alice's queue full, ${idle} us idle"
	# Her queued records are never forgotten to make room.
	assert_eq 1001 "$(as_user alice "$BGRUN" list -s "$session" | tail -n +2 | wc -l)" "alice's jobs"
}

# bob's Launch of `true`, answered: the median of 9, in microseconds.
bob_launch_time() {
	local i t0 t1 times=()
	for i in 1 2 3 4 5 6 7 8 9; do
		t0=$(date +%s%6N)
		as_user bob busctl call "${MGR[@]}" Launch 'sssa{sv}' true "" / 0 >/dev/null || fail "bob's Launch"
		t1=$(date +%s%6N)
		times+=($((t1 - t0)))
	done
	printf '%s\n' "${times[@]}" | sort -n | sed -n 5p
}

# Input written to a queued Stdin=pipe job waits in its record (at most
# 1 MiB, kept across a restart of bgrund) and reaches it once it runs, in
# order, with its end.
test_input_to_a_queued_job_is_held_until_it_starts() {
	local session=queue-input-$$ blocker_id id out
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	blocker_id=$(blocker "$session") || fail "blocker"
	id=$(bgrun run -s "$session" --queue --parallel 1 --open-stdin -- 'cat; echo end') || fail "launch"
	assert_eq queued "$(job_status "$id")" "status"
	bgrun send "$id" "first" || fail "send to a queued job"
	bgrun send "$id" "second" || fail "send to a queued job"
	out=$(busctl call "${MGR[@]}" WriteInput sayb "$id" 1 120 false 2>&1)
	[[ -z $out ]] || fail "WriteInput of 1 byte: $out"
	# Past the 1 MiB it holds: InputFull, nothing written.
	assert_eq org.bgrun.Runtime1.Error.InputFull "$(/usr/bin/python3 "$CLIENTS_DIR/input.py" size "$id" $((1024 * 1024)))" \
		"1 MiB more"
	restart_bgrund || fail "restart"
	bgrun send "$id" --eof || fail "the end of its input, while queued"
	expect_fail bgrun send "$id" "late"
	assert_contains "$ERR_OUT" "No input: " "input after its end was asked for"
	bgrun kill "$blocker_id" >/dev/null || fail "kill the blocker"
	bgrun wait -t 30s "$id" >/dev/null || fail "the job did not end"
	assert_eq exited "$(job_status "$id")" "status"
	assert_eq "$(printf 'first\nsecond\nxend')" "$(bgrun logs "$id")" "what it read, in order, and its end"
	[[ ! -e /var/lib/bgrun/jobs/$id/input ]] || fail "the held input outlived its feeding"
	# A queued job launched without an input has none to hold.
	blocker_id=$(blocker "$session") || fail "blocker"
	on_exit "bgrun kill --session $session >/dev/null 2>&1"
	id=$(bgrun run -s "$session" --queue --parallel 1 -- 'true') || fail "launch"
	expect_fail bgrun send "$id" "x"
	assert_contains "$ERR_OUT" "No input: " "input to a queued job without one"
}

# Subscribers hear of a queued job at once (JobNew) and of its start
# (PropertiesChanged, status running), then of its end.
test_subscribers_hear_a_queued_job_start() {
	local session=queue-signals-$$ blocker_id id mon statuses
	# Whatever happens, nothing of it stays queued or running for the next test.
	on_exit "kill_session $session"
	(/usr/bin/python3 "$CLIENTS_DIR/subscribe.py" 20 >signals.out 2>&1) &
	mon=$!
	on_exit "kill $mon 2>/dev/null; rm -f signals.out"
	wait_until 5 grep -q '^ready' signals.out || fail "subscriber not ready: $(cat signals.out)"
	blocker_id=$(blocker "$session") || fail "blocker"
	id=$(bgrun run -s "$session" --queue --parallel 1 -- 'sleep 0.2') || fail "launch"
	wait_until 5 grep -q "\"JobNew\".*$id" signals.out || fail "no JobNew for the queued job: $(cat signals.out)"
	bgrun kill "$blocker_id" >/dev/null || fail "kill the blocker"
	wait_until 10 grep -q "\"JobRemoved\".*$id" signals.out || fail "no JobRemoved: $(cat signals.out)"
	statuses=$(grep '^{' signals.out | jq -r --arg p "/org/bgrun/Runtime1/job/$id" \
		'select(.member == "PropertiesChanged" and .path == $p) | .body[1].status' | tr '\n' ' ')
	assert_eq "running exited " "$statuses" "the queued job's PropertiesChanged statuses"
}
