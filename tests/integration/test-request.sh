# SPDX-License-Identifier: MIT
# What an agent runtime needs of the D-Bus API (issue #32): RequestId
# launches at most once, Argv runs a program's words exactly with no shell,
# WaitOutput answers when output arrives.

M=(org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager)

# launch COMMAND OPTION-COUNT OPTIONS...: Launch's job id, or the error.
launch() {
	local command=$1
	shift
	busctl call "${M[@]}" Launch 'sssa{sv}' "$command" request-test / "$@" 2>&1 | sed -n 's/^so "\([^"]*\)".*/\1/p;/^Call failed/p'
}

lines_of() { wc -l <"$1"; }

test_a_request_id_launches_once_per_owner_while_its_record_is_kept() {
	local f=/run/bgrun-test-request-once a b c other
	rm -f "$f"
	a=$(launch "echo ran >> $f" 1 RequestId s deploy-$$) && [[ $a != Call* ]] || fail "first Launch: $a"
	wait_until 10 test -s "$f" || fail "the job did not run"
	bgrun wait "$a" >/dev/null || fail "wait"
	b=$(launch "echo ran >> $f" 1 RequestId s deploy-$$)
	assert_eq "$a" "$b" "a second Launch with the RequestId answers the first's job"
	assert_eq 1 "$(wc -l <"$f")" "lines the command wrote"
	assert_eq deploy-$$ "$(jget "$a" .request_id)" "the record's request_id"
	grep -q "\"request_id\":\"deploy-$$\"" "/var/lib/bgrun/jobs/$a/spec.json" || fail "request_id is not in spec.json"
	# Another command under the same id starts nothing and names the job.
	c=$(launch "echo other >> $f" 1 RequestId s deploy-$$)
	assert_contains "$c" "RequestId 'deploy-$$' launched job $a with another command" "another command under the id"
	assert_eq 1 "$(wc -l <"$f")" "lines after another command under the id"
	# The promise outlives bgrund: a restarted one finds the id in the store.
	systemctl restart bgrund.service || fail "restart"
	b=$(launch "echo ran >> $f" 1 RequestId s deploy-$$)
	assert_eq "$a" "$b" "a Launch with the RequestId after a restart of bgrund"
	assert_eq 1 "$(wc -l <"$f")" "lines after the restart"
	# Ids are per owner: another user's same id is its own job.
	setup_users
	other=$(as_user alice busctl call "${M[@]}" Launch 'sssa{sv}' true request-test / 1 RequestId s deploy-$$ |
		sed -n 's/^so "\([^"]*\)".*/\1/p')
	[[ -n $other && $other != "$a" ]] || fail "another owner's Launch with the id: '$other'"
	# Forgotten, the id launches anew.
	bgrun forget "$a" >/dev/null || fail "forget"
	b=$(launch "echo ran >> $f" 1 RequestId s deploy-$$)
	[[ -n $b && $b != "$a" && $b != Call* ]] || fail "a Launch after Forget: '$b'"
	wait_until_eq 10 2 lines_of "$f" || fail "the id did not launch anew after Forget"
	# Bad ids are refused before anything.
	assert_contains "$(launch true 1 RequestId s 'a b')" "Option RequestId must be"
	assert_contains "$(launch true 1 RequestId s '')" "Option RequestId must be"
}

# Six Launches with one RequestId, sent at once from six connections while
# the first is still starting: one job, one run, the same answer for all.
test_concurrent_launches_with_one_request_id_run_one_job() {
	local f=/run/bgrun-test-request-concurrent out=/tmp/bgrun-test-request-answers
	rm -f "$f" "$out".*
	for i in 1 2 3 4 5 6; do
		launch "echo ran >> $f; sleep 2" 1 RequestId s concurrent-$$ >"$out.$i" &
	done
	wait
	local ids
	ids=$(cat "$out".* | sort -u)
	assert_eq 1 "$(wc -l <<<"$ids")" "distinct answers: $(cat "$out".*)"
	[[ $ids != Call* ]] || fail "the Launches failed: $ids"
	bgrun wait "$ids" >/dev/null || fail "wait"
	assert_eq 1 "$(wc -l <"$f")" "times the command ran"
	assert_eq 1 "$(bgrun list -s request-test --json | jq '[.[] | select(.id == "'"$ids"'")] | length')" "jobs"
	rm -f "$out".*
}

# A Launch that waits on the first of its id, which fails and leaves no
# record (its cwd cannot be entered), is served as a Launch of its own.
test_a_launch_waiting_on_a_failed_first_is_served_on_its_own() {
	local first second
	mkdir -p /run/bgrun-test-request-dir
	# The first's cwd is one its user cannot enter: refused by the
	# supervisor, after the second arrived and waited on it (bgrund stopped
	# while both are sent reads them in one go).
	setup_users
	chmod 700 /run/bgrun-test-request-dir
	stop_bgrund
	as_user alice busctl call "${M[@]}" Launch 'sssa{sv}' "echo ran >> /tmp/alice-request" s \
		/run/bgrun-test-request-dir 1 RequestId s retry-$$ >/tmp/first.out 2>&1 &
	first=$!
	as_user alice busctl call "${M[@]}" Launch 'sssa{sv}' "echo ran >> /tmp/alice-request" s \
		/run/bgrun-test-request-dir 1 RequestId s retry-$$ >/tmp/second.out 2>&1 &
	second=$!
	sleep 1
	kill -CONT "$BGRUND"
	wait "$first" "$second"
	assert_contains "$(cat /tmp/first.out)" "user alice can enter" "the first Launch"
	assert_contains "$(cat /tmp/second.out)" "user alice can enter" "the second Launch, served as its own"
	rm -rf /run/bgrun-test-request-dir /tmp/first.out /tmp/second.out
}

# bgrun run --request-id: a retry of a run that gave up (bgrund stopped past
# its deadline) runs the command exactly once.
test_a_retried_run_with_a_request_id_runs_once() {
	local f=/run/bgrun-test-request-cli id again
	rm -f "$f"
	stop_bgrund "rm -f $f"
	timeout 60 bgrun --call-timeout 1s run --request-id cli-$$ -s request-test -- "echo ran >> $f" >/dev/null 2>err
	assert_eq 245 "$?" "run with bgrund stopped ($(cat err))"
	kill -CONT "$BGRUND"
	id=$(bgrun run -q --request-id cli-$$ -s request-test -- "echo ran >> $f") || fail "the retry"
	again=$(bgrun run -q --request-id cli-$$ -s request-test -- "echo ran >> $f") || fail "a second retry"
	assert_eq "$id" "$again" "the second retry answers the job"
	bgrun wait "$id" >/dev/null || fail "wait"
	assert_eq 1 "$(wc -l <"$f")" "times the command ran"
	bgrun run --request-id 'no spaces' -- true 2>err && fail "a bad --request-id was taken"
	assert_contains "$(cat err)" "Invalid --request-id"
}

test_argv_runs_the_words_exactly() {
	local id out
	# shellcheck disable=SC2016
	id=$(launch "" 1 Argv as 5 printf '%s|' 'a b' '$HOME' '*') && [[ $id != Call* ]] || fail "Launch: $id"
	bgrun wait "$id" >/dev/null || fail "wait"
	# shellcheck disable=SC2016
	assert_eq 'a b|$HOME|*|' "$(bgrun logs "$id")" "the output"
	# shellcheck disable=SC2016
	assert_eq "printf '%s|' 'a b' '\$HOME' '*'" "$(jget "$id" .command)" "the record's command"
	assert_eq 5 "$(jget "$id" '.argv | length')" "the record's argv"
	# The CLI sends several words as Argv; one word stays a shell line.
	# shellcheck disable=SC2016
	out=$(bgrun run --wait -q -- printf '%s|' 'a b' '$HOME' '*') || fail "bgrun run"
	# shellcheck disable=SC2016
	assert_eq 'a b|$HOME|*|' "$out" "bgrun run's output"
	assert_eq "sh" "$(bgrun run --wait -q -- 'echo sh')" "one word"
	id=$(bgrun run -q -- true 'x') || fail "run"
	assert_eq '["true","x"]' "$(jget "$id" '.argv' | jq -c .)" "bgrun run's argv"
}

test_argv_finds_the_program_in_the_jobs_own_path_or_refuses() {
	local dir=/run/bgrun-test-argv-path id out n
	mkdir -p "$dir"
	printf '#!/bin/sh\necho found "$@"\n' >"$dir/only-here"
	printf 'echo no interpreter line "$1"\n' >"$dir/plain-script"
	chmod 755 "$dir/only-here" "$dir/plain-script"
	id=$(launch "" 2 Argv as 2 only-here x Environment as 1 "PATH=$dir") && [[ $id != Call* ]] || fail "Launch: $id"
	bgrun wait "$id" >/dev/null
	assert_eq "found x" "$(bgrun logs "$id")" "a program in the job's PATH"
	id=$(launch "" 2 Argv as 2 plain-script y Environment as 1 "PATH=$dir")
	bgrun wait "$id" >/dev/null
	assert_eq "no interpreter line y" "$(bgrun logs "$id")" "a script with no #! runs with /bin/sh, as execvp's"
	# Not in the job's PATH (bgrund's has none of it): refused, no record.
	n=$(bgrun list --json | jq length)
	out=$(launch "" 1 Argv as 1 only-here)
	assert_contains "$out" "program 'only-here' is not found in the job's PATH"
	assert_eq "$n" "$(bgrun list --json | jq length)" "jobs after the refusal"
	# Not executable by the job's user.
	chmod 644 "$dir/only-here"
	assert_contains "$(launch "" 2 Argv as 1 "$dir/only-here" Environment as 1 "PATH=$dir")" "is not found"
	# A command with Argv, or neither, is refused.
	assert_contains "$(launch "true" 1 Argv as 1 true)" 'must be "" with Argv'
	assert_contains "$(launch "" 0)" "The command is empty"
	assert_contains "$(launch "" 1 Argv as 0)" "Argv must begin with the program"
	out=$(bgrun run --wait -- no-such-program-here x 2>&1) && fail "run of a missing program: $out"
	assert_contains "$out" "no-such-program-here"
	rm -rf "$dir"
}

test_wait_output_answers_when_output_arrives() {
	local id start out ms
	id=$(bgrun run -q -- 'echo one; sleep 2; echo two; sleep 300') || fail "run"
	wait_until_eq 10 4 jget "$id" .output_bytes || fail "no first line"
	# Output past the offset: at once, as ReadOutput.
	out=$(busctl call "${M[@]}" WaitOutput stut "$id" 0 100 30000000)
	assert_eq "aytb 4 111 110 101 10 4 false" "$out" "WaitOutput with output past its offset"
	# Nothing past it yet: answered once "two" is written. Its timeout is an
	# hour away and the job runs on, so an answer within busctl's own 60 s
	# can only be the output's (no clock is bounded here).
	out=$(busctl --timeout=60 call "${M[@]}" WaitOutput stut "$id" 4 100 3600000000)
	assert_eq "aytb 4 116 119 111 10 8 false" "$out" "WaitOutput's answer when output came"
	assert_eq 0 "$(inotify_watches)" "watches left once it answered"
	# Nothing comes: answered empty at its timeout.
	out=$(busctl call "${M[@]}" WaitOutput stut "$id" 8 100 300000)
	assert_eq "aytb 0 8 false" "$out" "WaitOutput at its timeout"
	assert_eq 0 "$(inotify_watches)" "watches left after a timeout"
	# The job's end answers a waiting one, complete once all was read.
	busctl --timeout=60 call "${M[@]}" WaitOutput stut "$id" 8 100 30000000 >wait.out &
	local waiter=$!
	wait_until_eq 10 1 inotify_watches || fail "no watch while WaitOutput waits"
	bgrun kill "$id" >/dev/null || fail "kill"
	wait "$waiter"
	assert_eq "aytb 0 8 true" "$(cat wait.out)" "WaitOutput when the job ended"
	assert_eq 0 "$(inotify_watches)" "watches left after the end"
	# An ended job's answers at once.
	assert_eq "aytb 4 116 119 111 10 8 true" "$(busctl call "${M[@]}" WaitOutput stut "$id" 4 100 30000000)"
	# Bounded like Wait: a caller that goes leaves no watch behind.
	id=$(bgrun run -q -- 'sleep 300') || fail "run"
	timeout 2 busctl --timeout=60 call "${M[@]}" WaitOutput stut "$id" 0 100 30000000 >/dev/null
	wait_until_eq 10 0 inotify_watches || fail "a watch outlived its caller"
	bgrun kill "$id" >/dev/null
}

# WaitOutput is a waiting call like Wait: 128 held on a connection, the
# 129th refused, and a connection that goes takes its waits and their
# watch with it.
test_wait_output_is_bounded_per_connection_and_leaves_no_watch() {
	setup_users
	local job out
	job=$(as_user alice "$BGRUN" run -q -C /home/alice -- 'sleep 300') || fail "alice cannot launch"
	on_exit "as_user alice $BGRUN kill $job >/dev/null 2>&1"
	out=$(as_user alice /usr/bin/python3 "$CLIENTS_DIR/sharing-waiters.py" "$job" --wait-output --noreply 1 --normal 127 \
		--extra) || fail "waiters failed: $out"
	assert_eq 0 "$(jq '.connections[0].answered' <<<"$out")" "WaitOutputs answered while nothing was written"
	assert_contains "$(jq -r '.connections[0].extra' <<<"$out")" "This connection has 128 calls waiting" "the 129th"
	# Another user's job is not there for bob: NoSuchJob, as for Get.
	out=$(as_user bob busctl call "${M[@]}" WaitOutput stut "$job" 0 100 1000000 2>&1) && fail "bob waited on alice's job: $out"
	assert_contains "$out" "No such job"
	wait_until_eq 10 0 inotify_watches || fail "watches left after the connection closed: $(inotify_watches)"
	pid_alive "$(bgrund_pid)" || fail "bgrund"
}
