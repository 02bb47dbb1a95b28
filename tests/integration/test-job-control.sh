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
