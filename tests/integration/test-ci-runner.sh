# SPDX-License-Identifier: MIT
# What a CI runner needs of the command line (issue #51): BGRUN_SESSION set
# once, --parallel given once for a session (and kept across a restart of
# bgrund), list's EXIT and RUNTIME, and wait on several jobs naming each
# that failed. Each test checks records, tables and exit statuses, never a
# latency.

# Every job of SESSION's, queued or running, killed.
kill_session() { # SESSION
	local id
	for id in $(bgrun list -s "$1" --json 2>/dev/null | jq -r '.[] | select(.status == "running" or .status == "queued") | .id'); do
		bgrun kill "$id" >/dev/null 2>&1
	done
}

test_bgrun_session_is_the_default_session() {
	local session=ci-env-$$ id out
	id=$(BGRUN_SESSION=$session bgrun run -q -- 'sleep 300') || fail "run"
	on_exit "bgrun kill $id >/dev/null 2>&1"
	assert_eq "$session" "$(jget "$id" .session_id)" "run's session"
	out=$(BGRUN_SESSION=$session bgrun list --json | jq -r '.[].id')
	assert_eq "$id" "$out" "list's session"
	assert_eq "$id" "$(BGRUN_SESSION=other-$$ bgrun list -s "$session" --json | jq -r '.[].id')" "-s wins"
	out=$(BGRUN_SESSION=$session bgrun kill) || fail "kill: $out"
	assert_contains "$out" "Killed 1 job of session $session"
	assert_eq killed "$(job_status "$id")"
	out=$(BGRUN_SESSION=other-$$ bgrun forget --ended)
	assert_eq killed "$(job_status "$id")" "forget --ended of another session"
	BGRUN_SESSION=$session bgrun forget --ended >/dev/null || fail "forget --ended"
	expect_fail bgrun status "$id"
	# Without it, kill still needs an id or --session.
	expect_fail env -u BGRUN_SESSION bgrun kill
	assert_contains "$ERR_OUT" "Missing job ID"
}

# --parallel given once holds for the session's later --queue launches,
# while any of its jobs is queued or running, across a restart of bgrund;
# a later --parallel replaces it.
test_parallel_given_once_holds_for_the_session() {
	local session=ci-par-$$ ids=() i out
	on_exit "kill_session $session"
	ids+=("$(bgrun run -q -s "$session" --queue --parallel 2 -- 'sleep 300')") || fail "launch"
	for i in 1 2 3; do
		ids+=("$(bgrun run -q -s "$session" --queue -- 'sleep 300')") || fail "launch $i"
	done
	out=$(bgrun list -s "$session" --json | jq -r '[.[] | .status] | join(" ")')
	assert_eq "running running queued queued" "$out" "four launches under --parallel 2 given once"
	systemctl reset-failed bgrund.service 2>/dev/null
	systemctl restart bgrund.service || fail "bgrund did not restart"
	bgrun kill "${ids[0]}" >/dev/null
	wait_until 10 bash -c "[[ \$(bgrun status ${ids[2]} --json | jq -r .status) == running ]]" ||
		fail "the first queued did not start after a kill"
	out=$(bgrun list -s "$session" --json | jq -r '[.[] | .status] | join(" ")')
	assert_eq "killed running running queued" "$out" "the limit after bgrund's restart"
	# A later --parallel replaces it: 3 lets the last one start.
	ids+=("$(bgrun run -q -s "$session" --queue --parallel 3 -- 'sleep 300')") || fail "launch"
	wait_until 10 bash -c "[[ \$(bgrun status ${ids[3]} --json | jq -r .status) == running ]]" ||
		fail "the limit did not rise: $(bgrun list -s "$session")"
	out=$(bgrun list -s "$session" --json | jq -r '[.[] | .status] | join(" ")')
	assert_eq "killed running running running queued" "$out" "under --parallel 3"
}

test_list_shows_exit_and_runtime() {
	local session=ci-list-$$ ok bad sig run out
	ok=$(bgrun run -q -s "$session" -- 'exit 0')
	bad=$(bgrun run -q -s "$session" -- 'exit 3')
	sig=$(bgrun run -q -s "$session" -- 'kill -KILL $$')
	run=$(bgrun run -q -s "$session" -- 'sleep 300')
	on_exit "bgrun kill $run >/dev/null 2>&1"
	bgrun wait "$ok" "$bad" "$sig" >/dev/null 2>&1
	out=$(bgrun list -s "$session")
	[[ $(head -1 <<<"$out") =~ STATUS\ +EXIT\ +RUNTIME\ +COMMAND$ ]] || fail "the header: $out"
	[[ $(grep "^$ok " <<<"$out") =~ \ exited\ +0\ +[0-9.]+s\  ]] || fail "the exit of 0: $out"
	[[ $(grep "^$bad " <<<"$out") =~ \ exited\ +3\ +[0-9.]+s\  ]] || fail "the exit of 3: $out"
	[[ $(grep "^$sig " <<<"$out") =~ \ SIGKILL\ +[0-9.]+s\  ]] || fail "a signal's name: $out"
	[[ $(grep "^$run " <<<"$out") =~ \ running\ +-\ +[0-9.]+s\  ]] || fail "a running job: $out"
	# The same from what bgrund loads at its start (the results' own start).
	systemctl restart bgrund.service || fail "bgrund did not restart"
	out=$(bgrun list -s "$session")
	[[ $(grep "^$bad " <<<"$out") =~ \ exited\ +3\ +[0-9.]+s\  ]] || fail "the exit of 3 after a restart: $out"
	[[ $(grep "^$sig " <<<"$out") =~ \ SIGKILL\ +[0-9.]+s\  ]] || fail "a signal's name after a restart: $out"
}

test_wait_on_several_names_each_that_failed() {
	local a b c rc=0 out
	a=$(bgrun run -q -- 'exit 0')
	b=$(bgrun run -q -- 'exit 4')
	c=$(bgrun run -q -- 'exit 5')
	out=$(bgrun wait "$a" "$c" "$b" 2>&1 >/dev/null) || rc=$?
	assert_eq 5 "$rc" "the status of the first that failed, in the order given"
	assert_contains "$out" "2 of 3 jobs did not succeed"
	assert_contains "$out" "$b exited with status 4"
	assert_contains "$out" "$c exited with status 5"
	assert_not_contains "$out" "$a"
	out=$(bgrun wait "$a" 2>&1) || fail "wait on one that succeeded: $out"
	assert_not_contains "$out" "did not succeed"
}
