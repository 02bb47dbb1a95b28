# SPDX-License-Identifier: MIT
# bgrun mcp (issue #26): driven by the official MCP TypeScript SDK
# (tests/mcp, installed by tools/install-deps) as an agent drives it,
# started with the README's command lines and the SDK's default environment;
# and fed bad lines raw.

MCP_DIR=$(cd "$TESTS_DIR/../mcp" && pwd)

# mcp_client SCENARIO SERVER-COMMAND...: the SDK client of tests/mcp.
mcp_client() {
	local scenario=$1
	shift
	[[ -d $MCP_DIR/node_modules/@modelcontextprotocol/sdk ]] \
		|| fail "the MCP SDK is not installed in $MCP_DIR (tools/install-deps installs it)"
	node "$MCP_DIR/client.mjs" "$scenario" -- "$@"
}

# run_scenario SCENARIO SERVER-COMMAND...: the scenario passes, or the test fails with what it said.
run_scenario() {
	local out
	out=$(mcp_client "$@" 2>&1) || fail "scenario $1 failed:
$out"
	echo "$out"
}

mcp_session_of() { bgrun status "$1" --json | jq -r .session_id; }

# The server the SDK started, by its pid (printed by the client).
server_pid_in() { sed -n 's/^SERVER_PID //p' "$1"; }
job_in() { sed -n 's/^JOB //p' "$1"; }

test_mcp_every_tool_through_the_sdk() {
	run_scenario tools bgrun mcp >/dev/null
}

test_mcp_run_queue_and_parallel() {
	run_scenario queue bgrun mcp >/dev/null
}

test_mcp_jobs_behave_for_a_reader_that_is_not_a_terminal() {
	run_scenario reader bgrun mcp >/dev/null
}

test_mcp_as_a_user_on_the_system_instance() {
	setup_users
	local out
	out=$(cd /home/alice && as_user alice env HOME=/home/alice PATH="$PATH" node "$MCP_DIR/client.mjs" basic -- bgrun mcp 2>&1) \
		|| fail "as alice: $out"
	assert_contains "$out" "ok - run through the README's command line"
}

test_mcp_kill_is_answered_while_a_wait_is_pending() {
	run_scenario concurrency bgrun mcp >/dev/null
}

test_mcp_cancelled_wait_leaves_the_job_running() {
	run_scenario cancel bgrun mcp >/dev/null
}

# A run cancelled before the model learned its job's id stops that job
# (issue #51): its command's effect happens at most once in full.
test_mcp_cancelled_run_stops_its_job() {
	local f
	f=$(mktemp)
	on_exit "rm -f $f"
	BGRUN_TEST_FILE=$f run_scenario cancel_run bgrun mcp >/dev/null
	assert_eq 2 "$(grep -c '^start a' "$f")" "the aborted run and its retry started: $(cat "$f")"
	assert_eq 1 "$(grep -c '^done a' "$f")" "only the retry ended: $(cat "$f")"
	assert_eq 2 "$(grep -c '^start b' "$f")" "the timed-out run and its retry started"
	assert_eq 1 "$(grep -c '^done b' "$f")" "only the retry ended"
	assert_eq 0 "$(grep -c '^done c' "$f")" "the run aborted at once never ran to its end"
}

test_mcp_progress_notifications() {
	run_scenario progress bgrun mcp >/dev/null
}

test_mcp_end_of_input_stops_its_jobs_and_keeps_the_records() {
	local out id session
	out=$(run_scenario leave bgrun mcp)
	id=$(job_in <(echo "$out"))
	[[ -n $id ]] || fail "no job: $out"
	wait_until 15 bash -c "[[ \$(bgrun status $id --json | jq -r .status) == killed ]]" \
		|| fail "job $id still $(job_status "$id") after the client went away"
	session=$(mcp_session_of "$id")
	[[ $session == mcp-?????? ]] || fail "session '$session' is not mcp- and a short suffix"
	assert_contains "$(bgrun list -s "$session")" "$id" "bgrun list -s $session"
}

test_mcp_keep_jobs_leaves_them_running() {
	local out id
	out=$(run_scenario leave bgrun mcp --keep-jobs -s mcp-kept)
	id=$(job_in <(echo "$out"))
	sleep 1
	assert_eq running "$(job_status "$id")" "job of --keep-jobs after the client went away"
	assert_eq false "$(jget "$id" .bind_to_caller)" "a job of --keep-jobs is not bound"
	assert_eq mcp-kept "$(mcp_session_of "$id")" "session of -s"
	bgrun kill "$id" >/dev/null
}

# signal_server SIGNAL: the client holds on while the server gets SIGNAL;
# the server's job must be stopped.
signal_server() {
	local out pid id i
	out=$(mktemp)
	MCP_TEST_HOLD=30 mcp_client leave bgrun mcp >"$out" 2>&1 &
	local client=$!
	on_exit "kill $client 2>/dev/null; rm -f $out"
	for ((i = 0; i < 100; i++)); do
		[[ -n $(server_pid_in "$out") ]] && break
		sleep 0.1
	done
	pid=$(server_pid_in "$out")
	id=$(job_in "$out")
	[[ -n $pid && -n $id ]] || fail "the client said no pid or job: $(cat "$out")"
	assert_eq running "$(job_status "$id")" "job before the server got $1"
	assert_eq true "$(jget "$id" .bind_to_caller)" "the job is bound to the server"
	kill -s "$1" "$pid"
	wait_until 15 bash -c "[[ \$(bgrun status $id --json | jq -r .status) == killed ]]" \
		|| fail "job $id still $(job_status "$id") after the server got $1"
}

test_mcp_sigterm_stops_its_jobs() { signal_server TERM; }
test_mcp_sighup_stops_its_jobs() { signal_server HUP; }
test_mcp_sigint_stops_its_jobs() { signal_server INT; }
# Needs bgrund's BindToCaller: nothing of the server runs after SIGKILL.
test_mcp_sigkill_stops_its_jobs() { signal_server KILL; }

# raw_lines FILE: what bgrun mcp answers to the lines in FILE, one JSON a line.
raw_answers() { bgrun mcp <"$1" 2>/dev/null; }

test_mcp_bad_lines_get_clear_errors_and_the_server_goes_on() {
	local in ans big
	in=$(mktemp)
	on_exit "rm -f $in"
	{
		echo 'not json'
		echo '{"jsonrpc":"2.0","id":1,"method":"ping"} trailing'
		printf '{"jsonrpc":"2.0","id":2,"method":"p\xff"}\n'
		echo '[{"jsonrpc":"2.0","id":3,"method":"ping"}]'
		echo '{"id":4,"method":"ping"}'
		echo '{"jsonrpc":"2.0","id":5,"method":"resources/list"}'
		echo '{"jsonrpc":"2.0","method":"notifications/whatever"}'
		echo '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run","arguments":{"command":"x","argv":["x"]}}}'
		echo '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run","arguments":{}}}'
		echo '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"status","arguments":{"id":1}}}'
		echo '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"kill","arguments":{"id":"x","force":true}}}'
		# A line of 5 MiB, refused without being held.
		printf '{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":"'
		head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' a
		echo '"}}'
		echo '{"jsonrpc":"2.0","id":11,"method":"ping"}'
	} >"$in"
	ans=$(raw_answers "$in") || fail "bgrun mcp failed: $ans"
	code_of() { jq -r --argjson id "$1" 'select(.id == $id) | .error.code' <<<"$ans"; }
	assert_eq 3 "$(jq -r 'select(.id == null) | .error.code' <<<"$ans" | grep -c -- -32700)" "-32700 with id null"
	assert_eq 2 "$(jq -r 'select(.id == null) | .error.code' <<<"$ans" | grep -c -- -32600)" \
		"-32600 with id null: the batch and the line over 4 MiB"
	assert_eq -32600 "$(code_of 4)" "no jsonrpc member"
	assert_eq -32601 "$(code_of 5)" "a method not served"
	assert_eq -32602 "$(code_of 6)" "run with command and argv"
	assert_eq -32602 "$(code_of 7)" "run with neither"
	assert_contains "$(jq -r 'select(.id == 8) | .error.message' <<<"$ans")" "'id'" "the wrong type named"
	assert_contains "$(jq -r 'select(.id == 9) | .error.message' <<<"$ans")" "'force'" "the unknown argument named"
	assert_contains "$(jq -c 'select(.id == null and .error.code == -32600)' <<<"$ans")" "4194304" \
		"the long line's error says the bound"
	assert_eq '{}' "$(jq -c 'select(.id == 11) | .result' <<<"$ans")" "ping after all of it"
	assert_eq 12 "$(wc -l <<<"$ans")" "one answer a line, none for the notification"
}

# The user's own bgrund, through `bgrun --user mcp` as the README says: the
# SDK passes neither XDG_RUNTIME_DIR nor DBUS_SESSION_BUS_ADDRESS, so the
# server finds the bus at /run/user/UID/bus.
test_mcp_user_instance_with_the_sdk_environment() {
	source "$TESTS_DIR/test-user.sh"
	hold_login alice
	local out
	out=$(bgrun-sandbox-login alice -- bash -c "node '$MCP_DIR/client.mjs' basic -- bgrun --user mcp" 2>&1) \
		|| fail "bgrun --user mcp as alice: $out"
	assert_contains "$out" "ok - run through the README's command line"
	assert_contains "$out" "MECHANISM systemd"
}

# initialize answers the client's version when it has it, else its newest;
# output schemas and structuredContent only from 2025-06-18 on.
test_mcp_version_negotiation() {
	local ans
	ans=$({
		echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
		echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
		echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run","arguments":{"command":"echo hi"}}}'
		sleep 3
	} | bgrun mcp 2>/dev/null)
	assert_eq 2024-11-05 "$(jq -r 'select(.id == 1) | .result.protocolVersion' <<<"$ans")" "the client's version"
	assert_eq 0 "$(jq -s '[.[] | select(.id == 2) | .result.tools[] | select(has("outputSchema"))] | length' <<<"$ans")" \
		"no outputSchema in 2024-11-05"
	assert_eq false "$(jq 'select(.id == 3) | .result | has("structuredContent")' <<<"$ans")" \
		"no structuredContent in 2024-11-05"
	assert_contains "$(jq -r 'select(.id == 3) | .result.content[0].text' <<<"$ans")" "hi"
	ans=$(echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}' | bgrun mcp 2>/dev/null)
	assert_eq 2025-11-25 "$(jq -r .result.protocolVersion <<<"$ans")" "an unknown version: the newest"
}

# A call to bgrund past the deadline (--call-timeout, as the CLI's) is the
# tool's error, and the server goes on once bgrund answers again.
test_mcp_call_deadline_is_an_iserror_result() {
	local out pid t0 t1
	out=$(mktemp)
	pid=$(bgrund_pid)
	on_exit "kill -CONT $pid; rm -f $out"
	{
		echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list","arguments":{}}}'
		sleep 1.5
		echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list","arguments":{}}}'
		sleep 4
		echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list","arguments":{}}}'
		sleep 1
	} | bgrun --call-timeout 2s mcp >"$out" 2>/dev/null &
	local server=$!
	sleep 1
	kill -STOP "$pid"
	t0=$(date +%s%N)
	wait_until 6 grep -q '"id":2' "$out" || fail "no answer to the call while bgrund was stopped"
	t1=$(date +%s%N)
	kill -CONT "$pid"
	wait "$server"
	assert_eq false "$(jq 'select(.id == 1) | .result.isError' "$out")" "the call before"
	assert_eq true "$(jq 'select(.id == 2) | .result.isError' "$out")" "isError past the deadline"
	assert_contains "$(jq -r 'select(.id == 2) | .result.content[0].text' "$out")" "did not answer ListJobsPaged"
	assert_le $(((t1 - t0) / 1000000)) 4500 "ms until the answer (deadline 2 s)"
	assert_eq false "$(jq 'select(.id == 3) | .result.isError' "$out")" "the call after bgrund answers again"
}

# A client that stops reading (its end of stdout closed) ends the server as
# the end of its input does: its jobs stopped.
# Against a stopped bgrund every tool answers within the call deadline plus
# what it asked to wait (kill: nothing), and a run that was not answered
# says the truth: it may have started, never "try again" (issue #32 row 4).
test_mcp_tools_keep_their_deadline_against_a_stopped_bgrund() {
	local out pid id t0 server
	out=$(mktemp)
	id=$(bgrun run -s mcp-deadline -- 'sleep 300') || fail "bgrun run"
	pid=$(bgrund_pid)
	on_exit "kill -CONT $pid; bgrun kill $id >/dev/null 2>&1; rm -f $out"
	{
		sleep 1
		echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kill","arguments":{"id":"'"$id"'"}}}'
		echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"id":"'"$id"'","timeout_sec":1}}}'
		echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run","arguments":{"command":"true","wait_sec":0}}}'
		sleep 6
	} | bgrun --call-timeout 2s mcp >"$out" 2>/dev/null &
	server=$!
	sleep 0.5
	kill -STOP "$pid"
	t0=$(date +%s%N)
	wait_until 8 grep -q '"id":1' "$out" || fail "kill never answered"
	local t_kill=$((($(date +%s%N) - t0) / 1000000))
	wait_until 8 grep -q '"id":2' "$out" || fail "wait never answered"
	local t_wait=$((($(date +%s%N) - t0) / 1000000))
	wait_until 8 grep -q '"id":3' "$out" || fail "run never answered"
	kill -CONT "$pid"
	wait "$server"
	# The calls went out 0.5 s after the stop: 2 s deadline + 1.5 s, + 1 s for wait's timeout_sec.
	assert_le "$t_kill" 4000 "ms until kill answered (deadline 2 s)"
	assert_le "$t_wait" 5000 "ms until wait answered (deadline 2 s, timeout_sec 1)"
	assert_eq true "$(jq 'select(.id == 1) | .result.isError' "$out")" "kill past the deadline is an error"
	local run_text
	run_text=$(jq -r 'select(.id == 3) | .result.content[0].text' "$out")
	assert_contains "$run_text" "may have started or not"
	[[ $run_text != *"Try again"* ]] || fail "a run not answered in time must not say to try again: $run_text"
}

# Issue #32 row 1: a run not answered in time (bgrund stopped) is an
# isError naming its request_id; a run with it runs the command once.
test_mcp_a_run_not_answered_in_time_runs_once_with_its_request_id() {
	local mark=/run/bgrun-test-mcp-once
	rm -f "$mark"
	on_exit "kill -CONT $(bgrund_pid); rm -f $mark"
	MCP_TEST_MARK=$mark MCP_TEST_BGRUND=$(bgrund_pid) run_scenario once bgrun --call-timeout 3s mcp >/dev/null
	assert_eq 1 "$(wc -l <"$mark")" "times the command ran"
}

# Waiting reads hold WaitOutput calls, at most 32 at a time (the rest look
# at the record), and every one answers when its job writes.
test_mcp_waiting_reads_use_at_most_32_wait_outputs() {
	local out ids=() i n
	out=$(mktemp)
	for i in $(seq 40); do
		ids+=("$(bgrun run -q -s mcp-reads -- 'sleep 3; echo line')") || fail "run"
	done
	on_exit "bgrun kill -s mcp-reads >/dev/null 2>&1; rm -f $out"
	{
		for i in $(seq 40); do
			echo '{"jsonrpc":"2.0","id":'"$i"',"method":"tools/call","params":{"name":"output","arguments":{"id":"'"${ids[$((i - 1))]}"'","offset":0,"wait_sec":30}}}'
		done
		sleep 8
	} | bgrun mcp >"$out" 2>/dev/null &
	local server=$!
	some_watch() { (($(inotify_watches) >= 1)); }
	wait_until 10 some_watch || fail "no WaitOutput held while 40 reads waited"
	n=$(inotify_watches)
	assert_le "$n" 32 "WaitOutput watches while 40 reads wait"
	wait "$server"
	assert_eq 40 "$(jq -s '[.[] | select(.result.structuredContent.output == "line\n")] | length' "$out")" \
		"reads answered with the line: $(head -c 600 "$out")"
}

test_mcp_closed_stdout_ends_the_server_and_its_jobs() {
	local session=mcp-closed$$ id
	{
		echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run","arguments":{"command":"sleep 300","wait_sec":1}}}'
		sleep 20
	} | bgrun mcp -s "$session" 2>/dev/null | true &
	local pipeline=$!
	on_exit "kill $pipeline 2>/dev/null"
	wait_until 10 bash -c "bgrun list -s $session | grep -q sleep" || fail "no job in $session"
	id=$(bgrun list -s "$session" --json | jq -r '.[0].id')
	wait_until 15 bash -c "[[ \$(bgrun status $id --json | jq -r .status) == killed ]]" \
		|| fail "job $id still $(job_status "$id") after the client closed its end of stdout"
	wait_until 5 bash -c "! pgrep -f '[b]grun mcp -s $session' >/dev/null" || fail "the server still runs"
}

# Many waits pending and a kill (issue #30): 200 waits, then 2,000.
test_mcp_kill_and_status_answer_with_hundreds_of_waits_pending() {
	local out
	out=$(BGRUN_TEST_WAITS=200 run_scenario waits bgrun mcp) || exit 1
	grep '^NOTE' <<<"$out"
	out=$(BGRUN_TEST_WAITS=2000 run_scenario waits bgrun mcp) || exit 1
	grep '^NOTE' <<<"$out"
}

# A client that sends requests and never reads an answer (issue #30: 237,639
# list calls grew the server to 152 MB): what it makes the server hold is
# bounded, calls under way included, and the server then reads no more.
test_mcp_a_client_that_never_reads_is_bounded() {
	local out
	out=$(/usr/bin/python3 - <<'PY'
import json, os, subprocess, time
p = subprocess.Popen(["bgrun", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
fd = p.stdin.fileno()
os.set_blocking(fd, False)
def rss():
    with open(f"/proc/{p.pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
pending, sent, peak, blocked_since = b"", 0, 0, None
end = time.monotonic() + 25
while time.monotonic() < end and sent < 240000:
    if not pending:
        pending = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list","arguments":{}}}\n'
                   % sent).encode()
    try:
        k = os.write(fd, pending)
        pending = pending[k:]
        if not pending:
            sent += 1
        blocked_since = None
    except BlockingIOError:
        blocked_since = blocked_since or time.monotonic()
        if time.monotonic() - blocked_since > 3:
            break  # the server reads no more: what it holds now is its bound
        time.sleep(0.01)
    if sent % 500 == 0:
        peak = max(peak, rss())
peak = max(peak, rss())
print(json.dumps({"sent": sent, "rss_peak_kb": peak, "stopped_reading": blocked_since is not None}))
p.kill()
PY
) || fail "the flood: $out"
	echo "NOTE: a client that never reads: $(jq -r '"\(.sent) requests taken, the server at most \(.rss_peak_kb) kB, reading \(if .stopped_reading then "stopped" else "went on" end)"' <<<"$out")"
	assert_eq true "$(jq -r .stopped_reading <<<"$out")" "the server stops reading a client that reads nothing"
	# An AddressSanitizer build keeps shadow memory and a quarantine: its
	# RSS is not the one bounded here (as in test-cost.sh).
	if [[ -z ${BGRUN_SANITIZER_LOG_DIR:-} ]]; then
		assert_le "$(jq -r .rss_peak_kb <<<"$out")" $((112 * 1024)) "the server's largest VmRSS (kB)"
	fi
}

# bgrun mcp --sandbox workspace: the floor of every run, driven by the SDK:
# a call with cwd / writes only the workspace; read-only is more and runs;
# off and the network are less and are isErrors; another job is not its.
test_mcp_sandbox_is_the_floor_of_every_run() {
	# Not under /tmp, which the workspace profile's jobs have their own of.
	local ws=/root/mcp-ws-$$ other out
	mkdir -p "$ws"
	on_exit "rm -rf $ws"
	other=$(bgrun run -q -- 'sleep 300') || fail "run"
	on_exit "bgrun kill $other >/dev/null 2>&1"
	# From the workspace: a cwd under /tmp is not there for a job with a /tmp of its own.
	out=$(cd "$ws" && BGRUN_TEST_WORKSPACE=$ws BGRUN_TEST_OTHER_JOB=$other mcp_client sandbox \
		bgrun mcp --sandbox workspace --workspace "$ws" 2>&1) || fail "scenario sandbox failed:
$out"
	[[ ! -e /bgrun-mcp-from-root && ! -e $ws/off && ! -e $ws/ro && -e $ws/written ]] || fail "wrote where it should not: $(ls "$ws")"
	assert_eq running "$(job_status "$other")" "another server's job, after its kill was refused"
	bgrun run -q -- true >/dev/null
	out=$(bgrun mcp --workspace /tmp </dev/null 2>&1) && fail "--workspace without --sandbox was taken"
	assert_contains "$out" "--workspace goes with --sandbox"
}
