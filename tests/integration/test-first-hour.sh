# SPDX-License-Identifier: MIT
# What a newcomer meets in the first hour (issue #36), each as a user of
# systemctl, git or pueue would expect: a bare bgrun shows what there is to
# run, an unknown option names its verb's help, and a kill of a job that had
# ended says so and names no method that did not run.

test_a_bare_bgrun_shows_the_short_help_as_a_usage_error() {
	local err rc=0
	err=$(bgrun 2>&1 >/dev/null) || rc=$?
	assert_eq 2 "$rc" "exit status of a bare bgrun"
	assert_contains "$err" "Commands:" "the verbs"
	assert_contains "$err" "  run " "run among them"
	assert_contains "$err" "See 'bgrun help VERB'" "where a verb's help is"
	assert_not_contains "$err" "Missing command" "a bare bgrun is not an error of the user's"
}

test_an_unknown_option_names_the_verbs_help() {
	local err rc=0
	err=$(bgrun run --bogus -- true 2>&1) || rc=$?
	assert_eq 2 "$rc" "exit status"
	assert_eq "bgrun: Unknown option '--bogus' for 'run'. See 'bgrun help run'." "$err" "the message"
	# That help exists, and lists the options run does take.
	assert_contains "$(bgrun help run)" "--wait" "bgrun help run"
	err=$(bgrun --bogus 2>&1) || true
	assert_eq "bgrun: Unknown option '--bogus'. See 'bgrun --help'." "$err" "before any verb"
}

test_a_kill_of_an_ended_job_says_so_and_names_no_method() {
	local id out
	id=$(bgrun run -- true) || fail "bgrun run"
	wait_until_eq 10 exited job_status "$id" || fail "the job never ended: $(job_status "$id")"
	out=$(bgrun kill "$id") || fail "kill of an ended job: $out"
	assert_eq "Job $id had ended already, nothing of it is left alive." "$out" "kill's answer"
	assert_not_contains "$out" "cgroup.kill" "a method this kill did not use"
	# A job this kill ends still says how.
	id=$(bgrun run -- 'sleep 300') || fail "bgrun run"
	wait_until_eq 10 running job_status "$id" || fail "not running: $(job_status "$id")"
	out=$(bgrun kill "$id") || fail "kill: $out"
	assert_eq "Job $id killed, nothing of it is left alive (cgroup.kill)." "$out" "kill's answer"
}

test_the_journalctl_hint_finds_what_bgrund_said() {
	# Issue #36, row 10: bgrun's hints say "see: journalctl -u bgrund", and
	# in tools/sandbox that found nothing (no journal ran there).
	local out
	systemctl restart bgrund.service || fail "restart bgrund"
	wait_until 5 eval 'journalctl --sync; journalctl -u bgrund -b --no-pager -q | grep -q "Started: containment mode"' ||
		fail "journalctl -u bgrund has not bgrund's start: $(journalctl -u bgrund -b --no-pager 2>&1 | tail -3)"
	out=$(journalctl -u bgrund -b --no-pager -q -o cat | grep "Started: containment mode" | tail -1)
	assert_contains "$out" "containment mode enforcing" "bgrund's start, as journalctl -u bgrund shows it"
}
