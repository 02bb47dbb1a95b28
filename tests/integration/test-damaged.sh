# SPDX-License-Identifier: MIT
# Damaged records (issue #10, row 11): bgrund starts, keeps every job it can
# verify, shows a damaged one (failed, where its end is unknown), and lets it
# be forgotten; nothing silently vanishes.

restart_bgrund() {
	systemctl reset-failed bgrund.service
	systemctl restart bgrund.service || fail "bgrund did not restart"
	wait_until 5 busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.freedesktop.DBus.Peer Ping ||
		fail "bgrund does not answer after the restart"
}

test_damaged_spec_of_an_ended_job_is_shown_and_forgettable() {
	id=$(bgrun run -- 'exit 4') || fail "launch failed"
	bgrun wait "$id" >/dev/null
	echo '{"id":' >"/var/lib/bgrun/jobs/$id/spec.json"
	restart_bgrund
	bgrun list --json | jq -e --arg id "$id" '.[] | select(.id == $id)' >/dev/null ||
		fail "the damaged job is not listed"
	rec=$(bgrun status "$id" --json) || fail "the damaged job cannot be read"
	assert_eq exited "$(jq -r .status <<<"$rec")" "status, known from its result"
	assert_eq 4 "$(jq -r .exit_code <<<"$rec")" "exit code, known from its result"
	assert_eq 0 "$(jq -r .owner <<<"$rec")" "owner, from its grant"
	bgrun forget "$id" || fail "the damaged job cannot be forgotten"
	[[ ! -e /var/lib/bgrun/jobs/$id ]] || fail "its record is still on disk"
}

test_damaged_run_of_a_running_job_keeps_it_running() {
	id=$(bgrun run -- 'sleep 300') || fail "launch failed"
	pid=$(jget "$id" .pid)
	sup=$(supervisor_pid "$id")
	printf 'garbage' >"/var/lib/bgrun/jobs/$id/run.json"
	restart_bgrund
	pid_alive "$pid" || fail "the job's command was killed"
	pid_alive "$sup" || fail "the job's supervisor was killed"
	assert_eq running "$(job_status "$id")" "status after the restart"
	res=$(bgrun kill "$id" --json) || fail "kill failed"
	assert_eq true "$(jq -r .killed <<<"$res")" killed
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	! pid_alive "$pid" || fail "the command survived the kill"
	assert_eq killed "$(job_status "$id")" "status after the kill"
}

# Where the supervisor's binary was replaced (an upgrade) it is not found by
# its command line, but by its cgroup: supervisor/ of the scope its grant names.
test_damaged_run_of_a_running_job_keeps_it_running_across_an_upgrade() {
	id=$(bgrun run -- 'sleep 300') || fail "launch failed"
	pid=$(jget "$id" .pid)
	sup=$(supervisor_pid "$id")
	printf 'garbage' >"/var/lib/bgrun/jobs/$id/run.json"
	exe=$(readlink "/proc/$sup/exe")
	cp "$exe" "$exe.new" && mv -f "$exe.new" "$exe" || fail "cannot replace $exe"
	assert_eq "$exe (deleted)" "$(readlink "/proc/$sup/exe")" "the running supervisor's binary"
	restart_bgrund
	pid_alive "$pid" || fail "the job's command was killed"
	pid_alive "$sup" || fail "the job's supervisor was killed"
	assert_eq running "$(job_status "$id")" "status after the restart"
	res=$(bgrun kill "$id" --json) || fail "kill failed"
	assert_eq true "$(jq -r .killed <<<"$res")" killed
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	! pid_alive "$pid" || fail "the command survived the kill"
}

test_damaged_result_is_failed_with_a_reason() {
	id=$(bgrun run -- 'exit 0') || fail "launch failed"
	bgrun wait "$id" >/dev/null
	head -c 20 "/var/lib/bgrun/jobs/$id/result.json" >trunc
	cp trunc "/var/lib/bgrun/jobs/$id/result.json"
	restart_bgrund
	rec=$(bgrun status "$id" --json) || fail "the damaged job cannot be read"
	assert_eq failed "$(jq -r .status <<<"$rec")" "status of a job whose end is unknown"
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" "dead: its containment was released"
	assert_contains "$(jq -r .reason "/var/lib/bgrun/jobs/$id/result.json")" "result.json was unreadable" reason
	[[ -e /var/lib/bgrun/jobs/$id/result.json.damaged ]] || fail "the damaged result was not kept aside"
	assert_eq released "$(jq -r .state <<<"$(grant_of "$id")")" "grant"
	bgrun forget "$id" || fail "forget failed"
}
