# SPDX-License-Identifier: MIT
# bgrund's journal entries (issue #13): a structured entry per job event,
# found by the job's id and by its unit, never with its command, cwd or
# environment. The sandbox runs systemd-journald, as a booted system does
# (tools/sandbox.d/init), and services' output goes to it and the console.

# with_journal: the sandbox's journal, which bgrund logs to.
with_journal() {
	systemctl is-active --quiet systemd-journald.service ||
		fail "no systemd-journald in the sandbox: $(systemctl status --no-pager systemd-journald.service 2>&1 | head -5)"
	assert_eq journal+console "$(systemctl show -P StandardOutput bgrund.service)" "where bgrund's output and messages go (StandardError=inherit)"
}

# entries FIELD=VALUE...: the matching entries as JSON lines, once journald has them.
entries() {
	journalctl --sync 2>/dev/null
	journalctl --no-pager -o json "$@" 2>/dev/null
}

# has_entry PATTERN FIELD=VALUE...: an entry that matches holds PATTERN.
has_entry() {
	local pattern=$1
	shift
	entries "$@" | grep -q -- "$pattern"
}

test_a_jobs_events_are_found_by_its_id_and_its_unit() {
	with_journal
	marker=secret-marker-$RANDOM$RANDOM
	id=$(MY_MARKER=$marker bgrun run -q -C /tmp -- "echo $marker") || fail "launch"
	bgrun wait "$id" >/dev/null
	wait_until 5 has_entry 7d3c16c7927c4757979d09df086dc9a7 BGRUN_JOB_ID="$id" || fail "no end entry for $id"
	out=$(entries BGRUN_JOB_ID="$id")
	assert_eq 2 "$(jq -s length <<<"$out")" "entries of $id: started and ended"
	assert_eq "9fdf37f206bb4aedbc24e70e21386e6a 7d3c16c7927c4757979d09df086dc9a7" \
		"$(jq -r .MESSAGE_ID <<<"$out" | xargs)" "MESSAGE_IDs: started, then ended"
	assert_eq "0 0" "$(jq -r .BGRUN_OWNER_UID <<<"$out" | xargs)" "owner uid"
	assert_eq "bgrun-job-$id.scope" "$(jq -r .OBJECT_SYSTEMD_UNIT <<<"$out" | sort -u)" "the job's unit"
	assert_eq exited "$(jq -r 'select(.BGRUN_STATUS) | .BGRUN_STATUS' <<<"$out")" "status field"
	assert_eq 0 "$(jq -r 'select(.BGRUN_EXIT_CODE) | .BGRUN_EXIT_CODE' <<<"$out")" "exit code field"
	# journalctl -u finds what a root daemon says about a unit (OBJECT_SYSTEMD_UNIT=).
	assert_eq 2 "$(journalctl --no-pager -o json -u "bgrun-job-$id.scope" 2>/dev/null |
		jq -s "map(select(.BGRUN_JOB_ID == \"$id\")) | length")" "journalctl -u bgrun-job-$id.scope"
	# Neither the command, nor the cwd, nor the environment.
	all=$(journalctl --no-pager -o export 2>/dev/null)
	assert_not_contains "$all" "$marker" "the command or the environment in the journal"
}

test_kill_stop_and_another_users_job_each_say_what_ended_it() {
	with_journal
	ensure_user alice
	BGRUN=$(command -v bgrun)
	k=$(bgrun run -q -- 'sleep 300') || fail "launch k"
	s=$(bgrun run -q -- "trap 'exit 0' TERM; sleep 300 & wait") || fail "launch s"
	a=$(as_user alice "$BGRUN" run -q -C / -- 'exit 3') || fail "launch a"
	bgrun kill "$k" >/dev/null || fail "kill"
	bgrun stop "$s" >/dev/null || fail "stop"
	as_user alice "$BGRUN" wait "$a" >/dev/null
	wait_until 5 has_entry BGRUN_STATUS BGRUN_JOB_ID="$a" || fail "no end entry for $a"
	assert_eq cd656152900944e1876860d681a03d72 \
		"$(entries BGRUN_JOB_ID="$k" BGRUN_STATUS=killed | jq -r .MESSAGE_ID)" "a Kill's entry"
	assert_eq "d663d5847ed14122a577a86b19d48dab signal 1" \
		"$(entries BGRUN_JOB_ID="$s" BGRUN_STATUS=killed | jq -r '"\(.MESSAGE_ID) \(.BGRUN_TEARDOWN) \(.BGRUN_DEAD)"')" \
		"a Stop's entry: stopped by its signal, dead"
	out=$(entries BGRUN_JOB_ID="$a" BGRUN_STATUS=exited)
	assert_eq "$(id -u alice) 3" "$(jq -r '"\(.BGRUN_OWNER_UID) \(.BGRUN_EXIT_CODE)"' <<<"$out")" "alice's job: owner and exit code"
}

test_a_limit_and_a_refusal_are_logged_with_the_owner() {
	with_journal
	ensure_user alice
	BGRUN=$(command -v bgrun)
	mkdir -p /etc/bgrun/bgrund.conf.d
	printf '[Limits]\nMaxRunningJobs=1\n' >/etc/bgrun/bgrund.conf.d/90-test-journal.conf
	trap 'rm -f /etc/bgrun/bgrund.conf.d/90-test-journal.conf; systemctl reset-failed bgrund.service;
	      systemctl restart bgrund.service' EXIT
	systemctl restart bgrund.service || fail "restart with MaxRunningJobs=1"
	a=$(as_user alice "$BGRUN" run -q -C / -- 'sleep 300') || fail "launch a"
	expect_fail as_user alice "$BGRUN" run -q -C / -- 'sleep 300'
	uid=$(id -u alice)
	wait_until 5 has_entry MaxRunningJobs MESSAGE_ID=ddcc6a34e4044019beb108c790c8b5d3 BGRUN_OWNER_UID="$uid" ||
		fail "no limit entry for alice"
	out=$(entries MESSAGE_ID=ddcc6a34e4044019beb108c790c8b5d3 BGRUN_OWNER_UID="$uid" | tail -n 1)
	assert_eq "MaxRunningJobs 1" "$(jq -r '"\(.BGRUN_LIMIT) \(.BGRUN_LIMIT_VALUE)"' <<<"$out")" "the limit and its value"
	as_user alice "$BGRUN" kill "$a" >/dev/null

	# Enforcing mode with no mechanism: refused, nothing ran, said once.
	printf '[Runtime]\nMechanisms=process_group\nContainmentMode=enforcing\n' >/etc/bgrun/bgrund.conf.d/90-test-journal.conf
	systemctl restart bgrund.service || fail "restart with process_group only"
	expect_fail as_user alice "$BGRUN" run -q -C / -- 'true'
	wait_until 5 has_entry . MESSAGE_ID=9f34c8180730401a8ff9ceb1354c7e92 BGRUN_OWNER_UID="$uid" ||
		fail "no refusal entry for alice"
}

test_every_message_id_is_documented_in_bgrund_8() {
	top=$TESTS_DIR/../..
	ids=$(sed -nE 's/^#define BGRUN_MESSAGE_[A-Z_]+ +"([0-9a-f]{32})".*/\1/p' "$top/src/bgrund/lifecycle/job-log.h")
	assert_eq 6 "$(wc -l <<<"$ids")" "MESSAGE_IDs in job-log.h"
	for id in $ids; do
		grep -q "$id" "$top/man/bgrund.8.scd" || fail "MESSAGE_ID $id is not in man/bgrund.8.scd"
	done
}
