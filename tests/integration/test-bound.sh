# SPDX-License-Identifier: MIT
# Jobs that die with their caller (issue #24): a job launched with
# BindToCaller is stopped, with its own signal and grace, when the
# connection that launched it closes, even when its caller was SIGKILLed,
# and even when that happened while bgrund was stopped. `bgrun run --wait`
# binds its job; a plain `bgrun run` is detached by design and runs on.

# launch COMMAND [OPTIONS]: a job through gdbus, whose connection closes as
# soon as the answer came; its id.
launch() {
	local out
	out=$(gcall Launch "'$1'" "'bound'" "'/'" "${2:-@a{sv\} {\}}") || fail "Launch failed: $out"
	sed -E "s/^\('([a-z0-9]+)'.*/\1/" <<<"$out"
}

is_status() { [[ $(job_status "$1") == "$2" ]]; }

# The id of the newest job of session S.
newest_of() { bgrun list -s "$1" --json | jq -r 'sort_by(.started_at) | last | .id // empty'; }
has_job() { [[ -n $(newest_of "$1") ]]; }

test_a_bound_job_is_stopped_when_its_callers_connection_closes() {
	local id start
	start=$SECONDS
	# gdbus leaves as soon as Launch answered: the job's caller is gone.
	# sleep runs with no shell: dash under -c catches SIGINT and loses one
	# that comes in the instant before it execs its last command (measured:
	# 7 of 200 such SIGINTs), which would make this the shell's race.
	id=$(launch '' "{'Argv': <['sleep', '300']>, 'BindToCaller': <true>, 'StopSignal': <int32 2>, 'StopGraceUSec': <uint64 5000000>}")
	wait_until 10 is_status "$id" killed || fail "a bound job whose caller left: $(job_status "$id")"
	assert_le $((SECONDS - start)) 6 "seconds until it was stopped"
	# Its own StopSignal (SIGINT here) ended it, within its grace.
	assert_eq 2 "$(jget "$id" .signal)" "the signal that ended it: its own StopSignal"
	assert_eq signal "$(jget "$id" .teardown.method)" "teardown.method: ended within the grace"
	assert_eq true "$(jget "$id" .bind_to_caller)" "bind_to_caller in the record"
	assert_eq true "$(jget "$id" .teardown.dead)" "teardown.dead"
}

test_an_unbound_job_runs_on_after_its_caller_left() {
	local id
	id=$(launch 'sleep 300')
	sleep 1
	assert_eq running "$(job_status "$id")" "a job launched without BindToCaller"
	assert_eq false "$(jget "$id" .bind_to_caller)" "bind_to_caller"
	bgrun kill "$id" >/dev/null
}

# The same through the CLI: a SIGKILLed `run --wait` leaves nothing behind,
# a plain `run` job runs on.
test_a_killed_run_wait_leaves_its_job_stopped() {
	local pid id
	bgrun run --wait -s orphan -- 'sleep 300' >/dev/null 2>&1 &
	pid=$!
	wait_until 10 has_job orphan || fail "run --wait's job never appeared"
	id=$(newest_of orphan)
	wait_until 10 is_status "$id" running || fail "the job never ran: $(job_status "$id")"
	assert_eq true "$(jget "$id" .bind_to_caller)" "run --wait binds its job"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	# Its grace is the default 5 s; sleep ends at SIGTERM at once.
	wait_until 8 is_status "$id" killed || fail "the job of a SIGKILLed run --wait: $(job_status "$id")"
	id=$(bgrun run -s detached -- 'sleep 300') || fail "bgrun run"
	sleep 1
	assert_eq running "$(job_status "$id")" "a plain run's job after bgrun left"
	assert_eq false "$(jget "$id" .bind_to_caller)" "a plain run binds nothing"
	bgrun kill "$id" >/dev/null
}

# A caller that leaves while bgrund is stopped: the restarted bgrund finds
# its name gone and stops the job.
test_a_caller_gone_while_bgrund_was_stopped_has_its_job_stopped_on_start() {
	local pid id
	bgrun run --wait -s gone-meanwhile -- 'sleep 300' >/dev/null 2>gone.err &
	pid=$!
	wait_until 10 has_job gone-meanwhile || fail "run --wait's job never appeared: $(cat gone.err)"
	id=$(newest_of gone-meanwhile)
	wait_until 10 is_status "$id" running || fail "the job never ran"
	on_exit "systemctl start bgrund.service"
	systemctl stop bgrund.service || fail "stop bgrund"
	# run --wait may have left with bgrund already: its connection closed
	# while bgrund was stopped either way.
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	systemctl start bgrund.service || fail "start bgrund"
	wait_until 10 is_status "$id" killed || fail "the job of a caller gone meanwhile: $(job_status "$id")"
	# A caller still there keeps its job across the restart (bgrun run
	# --wait leaves with bgrund: a caller of its own holds the connection).
	/usr/bin/python3 "$CLIENTS_DIR/bound-launch.py" 'sleep 300' >kept.id 2>kept.err &
	pid=$!
	on_exit "kill -KILL $pid 2>/dev/null"
	wait_until 10 test -s kept.id || fail "bound-launch.py: $(cat kept.err)"
	id=$(cat kept.id)
	assert_eq true "$(jget "$id" .bind_to_caller)" "bind_to_caller"
	systemctl restart bgrund.service || fail "restart bgrund"
	sleep 1
	assert_eq running "$(job_status "$id")" "a bound job whose caller is still there, after a restart"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	wait_until 8 is_status "$id" killed || fail "the job once its caller left after the restart: $(job_status "$id")"
}
