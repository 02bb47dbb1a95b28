# SPDX-License-Identifier: MIT
# Jobs that die with their caller, on a --listen socket in a container's
# setting (issue #24): no bus daemon, so bgrund sees a connection close
# itself. A connection does not outlive bgrund: after a restart the binding
# is ended (bind_to_caller false) and the job runs on, as the contract says.
# EnforceLimits is refused on the cgroupfs mechanism as on systemd's.

in_container() {
	[[ ${BGRUN_SANDBOX_KIND:-} == container ]] || skip "needs tools/sandbox --no-systemd (a container's setting)"
}

is_status() { [[ $(job_status "$1") == "$2" ]]; }
newest_of() { bgrun list -s "$1" --json | jq -r 'sort_by(.started_at) | last | .id // empty'; }
has_job() { [[ -n $(newest_of "$1") ]]; }

test_listen_a_killed_run_wait_leaves_its_job_stopped() {
	in_container
	local pid id
	bgrun run --wait -s orphan -- 'sleep 300' >/dev/null 2>&1 &
	pid=$!
	wait_until 10 has_job orphan || fail "run --wait's job never appeared"
	id=$(newest_of orphan)
	wait_until 10 is_status "$id" running || fail "the job never ran"
	assert_eq true "$(jget "$id" .bind_to_caller)" "run --wait binds its job"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	wait_until 8 is_status "$id" killed || fail "the job of a SIGKILLed run --wait: $(job_status "$id")"
	id=$(bgrun run -s detached -- 'sleep 300') || fail "bgrun run"
	sleep 1
	assert_eq running "$(job_status "$id")" "a plain run's job after bgrun left"
	bgrun kill "$id" >/dev/null
}

test_listen_a_restart_ends_the_binding_and_the_job_runs_on() {
	in_container
	local pid id
	bgrun run --wait -s rebound -- 'sleep 300' >/dev/null 2>&1 &
	pid=$!
	wait_until 10 has_job rebound || fail "run --wait's job never appeared"
	id=$(newest_of rebound)
	wait_until 10 is_status "$id" running || fail "the job never ran"
	"$BGRUN_SANDBOX_BGRUND" restart || fail "bgrund did not restart"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	sleep 1
	assert_eq running "$(job_status "$id")" "a bound job after a restart of bgrund --listen"
	assert_eq false "$(jget "$id" .bind_to_caller)" "bind_to_caller after the restart"
	bgrun kill "$id" >/dev/null
}

test_listen_strict_limits_are_refused_without_controllers() {
	in_container
	local out id
	rm -f /tmp/bgrun-strict-ran
	if grep -qw memory "$CG/cgroup.subtree_control" 2>/dev/null; then
		id=$(bgrun run --strict-limits -p MemoryMax=64M -- 'true') || fail "a strict run whose limit is enforced"
		echo "NOTE: the memory controller is there: MemoryMax enforced, no refusal to see"
		return 0
	fi
	if out=$(bgrun run --strict-limits -s strict -p MemoryMax=64M -- 'touch /tmp/bgrun-strict-ran' 2>&1); then
		fail "run --strict-limits launched: $out"
	fi
	assert_contains "$out" "MemoryMax" "the refusal names the limit"
	# Said once (issue #36), though the CLI and bgrund both know it.
	assert_eq 1 "$(grep -o 'nothing was run' <<<"$out" | wc -l)" "'nothing was run' in: $out"
	assert_eq 0 "$(bgrun list -s strict --json | jq length)" "records after the refusal"
	[[ ! -e /tmp/bgrun-strict-ran ]] || fail "the refused command ran"
}
