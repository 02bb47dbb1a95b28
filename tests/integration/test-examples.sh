# SPDX-License-Identifier: MIT
# The client examples run against the sandbox's bgrund: examples/agent.py
# (dbus-next) streams a job's output while it runs, stops it when cancelled
# and reads its record; examples/launch.c (sd-bus), as meson built it, runs a
# job and exits with its status.

EXAMPLES_DIR=$(cd "$TESTS_DIR/../../examples" && pwd)
# The build dir: tools/test exports it; the staging prefix is inside it.
EXAMPLES_BUILD_DIR=${BGRUN_BUILD_DIR:-${BGRUN_PREFIX%/stage/usr}}

need_dbus_next() {
	/usr/bin/python3 -c 'import dbus_next' 2>/dev/null ||
		fail "python3-dbus-next is missing: tools/install-deps installs it"
}

test_agent_py_runs_a_job_and_reads_its_record() {
	need_dbus_next
	"$EXAMPLES_DIR/agent.py" -s agent -t 30 -E GREETING=hello -- 'echo $GREETING; sleep 0.3; echo two; exit 3' \
		>out 2>err
	rc=$?
	assert_eq 3 "$rc" "agent.py's exit status (the job's exit code)"
	assert_eq $'hello\ntwo' "$(cat out)" "the job's output on agent.py's stdout"
	record=$(tail -1 err)
	assert_eq exited "$(jq -r .status <<<"$record")" "record status: $record"
	assert_eq 3 "$(jq -r .exit_code <<<"$record")" "record exit_code"
	assert_eq true "$(jq -r .teardown.dead <<<"$record")" "record teardown.dead"
	id=$(jq -r .id <<<"$record")
	assert_eq agent "$(jget "$id" .session_id)" "the job's session, as bgrun sees it"
	bgrun forget "$id"
}

# Several words after -- are a program and its words, sent as Argv and run
# exactly with no shell; one is a shell command line (issues #25, #32).
test_agent_py_runs_several_words_as_an_argv() {
	need_dbus_next
	out=$("$EXAMPLES_DIR/agent.py" -- printf '%s\n' 'two words' "it's" 2>err) || fail "agent.py: $(cat err)"
	assert_eq $'two words\nit\'s' "$out" "printf's output, each word as given"
	bgrun forget "$(tail -1 err | jq -r .id)"
	# shellcheck disable=SC2016
	out=$("$EXAMPLES_DIR/agent.py" -- printf '%s|' 'a b' '$HOME' '*' 2>err) || fail "agent.py: $(cat err)"
	# shellcheck disable=SC2016
	assert_eq 'a b|$HOME|*|' "$out" "Argv's words, with no shell"
	assert_eq 5 "$(tail -1 err | jq '.argv | length')" "the record's argv"
}

# Issue #32 row 7: agent.py binds its job, so a SIGKILL of it leaves no job
# running; and a second run with its request id starts nothing.
test_agent_py_killed_leaves_no_job_and_a_retry_runs_once() {
	need_dbus_next
	"$EXAMPLES_DIR/agent.py" -- 'echo ready; sleep 300' >out 2>err &
	local agent=$! id
	wait_until 15 grep -qx ready out || { kill "$agent"; fail "no output streamed: $(cat out err)"; }
	id=$(sed -n 's/^agent.py: running as job \([^ ]*\).*/\1/p' err)
	kill -KILL "$agent"
	wait "$agent" 2>/dev/null
	wait_until_eq 15 killed job_status "$id" || fail "the job is $(job_status "$id") after agent.py was killed"
	local f=/run/bgrun-test-agent-once rid=agent-once-$$-$RANDOM
	rm -f "$f"
	"$EXAMPLES_DIR/agent.py" --request-id "$rid" -- "echo ran >> $f" >/dev/null 2>err || fail "agent.py: $(cat err)"
	"$EXAMPLES_DIR/agent.py" --request-id "$rid" -- "echo ran >> $f" >/dev/null 2>err || fail "agent.py again: $(cat err)"
	assert_eq 1 "$(wc -l <"$f")" "times the command ran"
	assert_eq "$rid" "$(tail -1 err | jq -r .request_id)" "the record's request_id"
	rm -f "$f"
}

# --address reaches bgrund --listen's socket as well as a bus: dbus-next says
# Hello and bgrund answers it (issue #25).
test_agent_py_address_reaches_bgrund_listen() {
	need_dbus_next
	[[ ${BGRUN_SANDBOX_KIND:-systemd} == systemd ]] || skip "needs the private systemd (tools/sandbox)"
	systemctl stop bgrund.service
	trap 'systemctl stop bgrund-listen.service 2>/dev/null; systemctl reset-failed bgrund-listen.service 2>/dev/null
	      systemctl reset-failed bgrund.service 2>/dev/null; systemctl start bgrund.service' EXIT
	systemd-run --quiet --unit=bgrund-listen -p Type=notify "$BGRUN_LIBEXECDIR/bgrund" --listen ||
		fail "bgrund --listen did not start"
	out=$("$EXAMPLES_DIR/agent.py" --address unix:path=/run/bgrun/bus -- 'echo over the socket' 2>err) ||
		fail "agent.py --address of the socket: $(cat err)"
	assert_eq "over the socket" "$out" "the job's output through the socket"
	assert_eq exited "$(tail -1 err | jq -r .status)" "the record through the socket"
}

# agent_cancelled: run agent.py on a job that says "ready", then handles
# SIGTERM by saying "stopping"; once "ready" has streamed, SIGINT agent.py.
# (A stop signals every process of the job: its sleep waits in the
# background, or the shell would first report it "Terminated".)
# Leaves out, err, $id and $rc (agent.py's exit status).
agent_cancelled() {
	"$EXAMPLES_DIR/agent.py" --grace 10 -- \
		'trap "echo stopping; exit 0" TERM; echo ready; sleep 300 & wait' >out 2>err &
	local agent=$!
	wait_until 15 grep -qx ready out || { kill "$agent"; fail "no output streamed: $(cat out err)"; }
	id=$(sed -n 's/^agent.py: running as job \([^ ]*\).*/\1/p' err)
	[[ -n $id ]] || { kill "$agent"; fail "agent.py did not name its job: $(cat err)"; }
	assert_eq running "$(job_status "$id")" "the job while its output is streamed"
	kill -INT "$agent"
	wait "$agent"
	rc=$?
}

# The output arrives while the job runs, and cancelling agent.py (SIGINT)
# ends the job: agent.py exits only once the job is confirmed dead.
test_agent_py_streams_while_running_and_ends_the_job_on_cancel() {
	need_dbus_next
	agent_cancelled
	assert_eq 130 "$rc" "agent.py's exit status after SIGINT"
	assert_contains "$(cat err)" "cancelled, stopping job $id" "agent.py's message"
	record=$(tail -1 err)
	assert_eq killed "$(jq -r .status <<<"$record")" "record status: $record"
	assert_eq true "$(jq -r .teardown.dead <<<"$record")" "teardown.dead"
	assert_eq killed "$(job_status "$id")" "the job as bgrun sees it"
	bgrun forget "$id"
}

# The cancel is a Stop, not a Kill: the job's own SIGTERM handler runs
# within the grace, and what it writes still reaches agent.py's output.
test_agent_py_cancel_lets_the_job_handle_its_stop_signal() {
	need_dbus_next
	agent_cancelled
	assert_eq 130 "$rc" "agent.py's exit status after SIGINT"
	record=$(tail -1 err)
	assert_eq $'ready\nstopping' "$(cat out)" "the output, up to the job's own SIGTERM handler; record: $record"
	assert_eq signal "$(jq -r .teardown.method <<<"$record")" "teardown.method (ended within the grace)"
	assert_eq killed "$(jq -r .status <<<"$record")" "record status"
	bgrun forget "$id"
}

# A user other than root runs the example as well: its job is its own.
test_agent_py_runs_as_an_unprivileged_user() {
	need_dbus_next
	ensure_user bgagent
	# In a directory the user may enter: the job's cwd is agent.py's.
	out=$(cd / && as_user bgagent env PATH="$PATH" "$EXAMPLES_DIR/agent.py" -- 'id -un' 2>"$OLDPWD/err")
	rc=$?
	assert_eq 0 "$rc" "agent.py as bgagent: $(cat err)"
	assert_eq bgagent "$out" "the job's user"
	owner=$(tail -1 err | jq -r .owner)
	assert_eq "$(id -u bgagent)" "$owner" "record owner"
}

test_launch_c_runs_a_job_and_exits_with_its_status() {
	launch=$EXAMPLES_BUILD_DIR/examples/launch
	[[ -x $launch ]] || fail "$launch was not built (examples/meson.build)"
	out=$("$launch" 'echo hello from C; sleep 0.2; echo bye; exit 5' launchc 2>err)
	rc=$?
	assert_eq 5 "$rc" "launch's exit status (the job's exit code): $(cat err)"
	id=$(sed -n 's/^Running as job //p' err)
	[[ -n $id ]] || fail "launch did not name its job: $(cat err)"
	assert_eq $'hello from C\nbye\njob '"$id"': exited, exit code 5, signal 0' "$out" "launch's output"
	assert_eq launchc "$(jget "$id" .session_id)" "the job's session"
	assert_eq exited "$(job_status "$id")" "the job's status"
	bgrun forget "$id"

	# A job ended by a signal: 128+N, as bgrun run --wait has it.
	"$launch" 'kill -TERM $$' >/dev/null 2>&1
	assert_eq 143 "$?" "launch's exit status for a job ended by SIGTERM"
	# An error of bgrund's comes with its D-Bus name.
	"$launch" '' >/dev/null 2>err && fail "launch of an empty command succeeded"
	assert_contains "$(cat err)" "org.freedesktop.DBus.Error.InvalidArgs" "launch's error"
}
