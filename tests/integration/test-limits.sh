# SPDX-License-Identifier: MIT
# Limits an administrator sets and limits a caller may insist on (issue
# #24): [Limits] DefaultMaxRuntimeSec= and MaxRuntimeSec= bound every job's
# wall-clock time on a shared host; EnforceLimits (run --strict-limits)
# refuses a job whose limits its cgroup cannot enforce, before anything
# runs, instead of recording them unenforced.

# with_limits KEY=VALUE...: bgrund with a [Limits] drop-in for the rest of
# the test; it goes, and bgrund restarts, when the test ends.
with_limits() {
	mkdir -p /etc/bgrun/bgrund.conf.d
	printf '%s\n' "[Limits]" "$@" >/etc/bgrun/bgrund.conf.d/92-test-runtime.conf
	trap 'rm -f /etc/bgrun/bgrund.conf.d/92-test-runtime.conf; systemctl reset-failed bgrund.service; systemctl restart bgrund.service' EXIT
	systemctl reset-failed bgrund.service
	systemctl restart bgrund.service || fail "bgrund did not restart with: $*"
}

# launch COMMAND [OPTIONS]: a job through the bus, its id.
launch() {
	local out
	out=$(gcall Launch "'$1'" "'limits'" "'/'" "${2:-@a{sv\} {\}}") || fail "Launch failed: $out"
	sed -E "s/^\('([a-z0-9]+)'.*/\1/" <<<"$out"
}

store_count() { ls /var/lib/bgrun/jobs | wc -l; }

# The controllers a job of root's gets: those of its owner's slice.
slice_controllers() { cat "$CG$ROOT_SLICE_CG/cgroup.controllers" 2>/dev/null; }

test_default_max_runtime_ends_a_job_launched_without_a_limit() {
	with_limits DefaultMaxRuntimeSec=2 MaxRuntimeSec=1h
	local id start
	start=$SECONDS
	id=$(launch 'sleep 300' "{'StopGraceUSec': <uint64 0>}")
	assert_eq 2000000 "$(jget "$id" .limits.MaxRuntimeUSec)" "the record's MaxRuntimeUSec: the default"
	gcall Wait "'$id'" "uint64 20000000" >/dev/null || fail "Wait failed"
	assert_eq timed_out "$(job_status "$id")" "status of a job past DefaultMaxRuntimeSec="
	assert_eq true "$(jget "$id" .timed_out)" timed_out
	assert_le $((SECONDS - start)) 10 "seconds until it ended"
	# A limit of its own, within the maximum, wins over the default.
	id=$(launch 'sleep 300' "{'MaxRuntimeUSec': <uint64 3000000000>}")
	assert_eq 3000000000 "$(jget "$id" .limits.MaxRuntimeUSec)" "a limit asked for, within MaxRuntimeSec="
	assert_eq running "$(job_status "$id")" "status after the default's time"
	bgrun kill "$id" >/dev/null
}

test_max_runtime_refuses_a_longer_request_and_is_the_limit_without_default() {
	with_limits MaxRuntimeSec=1h
	local store id
	store=$(store_count)
	expect_fail gcall Launch "'touch /tmp/bgrun-limits-ran'" "'limits'" "'/'" "{'MaxRuntimeUSec': <uint64 7200000000>}"
	assert_contains "$ERR_OUT" org.bgrun.Runtime1.Error.LimitExceeded "error name"
	assert_contains "$ERR_OUT" "MaxRuntimeSec=1h" "the message names the key and its value"
	assert_eq "$store" "$(store_count)" "job directories after the refusal"
	sleep 0.5
	[[ ! -e /tmp/bgrun-limits-ran ]] || fail "the refused command ran"
	# Infinity is above every maximum too (it was given the maximum in
	# silence, while a second more was refused).
	expect_fail gcall Launch "'touch /tmp/bgrun-limits-ran'" "'limits'" "'/'" "{'MaxRuntimeUSec': <uint64 18446744073709551615>}"
	assert_contains "$ERR_OUT" org.bgrun.Runtime1.Error.LimitExceeded "infinity's error name"
	assert_contains "$ERR_OUT" "MaxRuntimeUSec=infinity is above MaxRuntimeSec=1h" "infinity's message"
	assert_eq "$store" "$(store_count)" "job directories after infinity's refusal"
	# Without a limit and without a default: the maximum.
	id=$(launch 'sleep 300')
	assert_eq 3600000000 "$(jget "$id" .limits.MaxRuntimeUSec)" "MaxRuntimeUSec of a job launched without one"
	bgrun kill "$id" >/dev/null
}

test_check_config_names_a_default_above_the_maximum() {
	printf '[Limits]\nDefaultMaxRuntimeSec=2h\nMaxRuntimeSec=30min\n' >rt.conf
	expect_fail bgrund --check-config --config "$PWD/rt.conf"
	assert_contains "$ERR_OUT" "DefaultMaxRuntimeSec=2h is above MaxRuntimeSec=30min" "check-config's error"
	printf '[Limits]\nMaxRuntimeSec=0\n' >rt.conf
	expect_fail bgrund --check-config --config "$PWD/rt.conf"
	assert_contains "$ERR_OUT" "$PWD/rt.conf:2: MaxRuntimeSec=" "file, line and key of a bad value"
	printf '[Limits]\nDefaultMaxRuntimeSec=10min\nMaxRuntimeSec=1h\n' >rt.conf
	out=$(bgrund --check-config --config "$PWD/rt.conf") || fail "check-config refused a good file: $out"
	assert_contains "$out" "DefaultMaxRuntimeSec=10min" "the effective configuration"
	assert_contains "$out" "MaxRuntimeSec=1h" "the effective configuration"
}

# On this host's hybrid layout the v2 tree has no memory controller: a
# MemoryMax= asked for cannot be enforced. Where it can, the job runs.
test_enforce_limits_refuses_a_limit_the_cgroup_cannot_enforce() {
	local store out id
	rm -f /tmp/bgrun-strict-ran
	store=$(store_count)
	if grep -qw memory <<<"$(slice_controllers)"; then
		id=$(launch 'sleep 300' "{'MemoryMax': <uint64 67108864>, 'EnforceLimits': <true>}")
		assert_eq running "$(job_status "$id")" "a job whose limit is enforced"
		bgrun kill "$id" >/dev/null
		echo "NOTE: the memory controller is there: MemoryMax enforced, no refusal to see"
		return 0
	fi
	expect_fail gcall Launch "'touch /tmp/bgrun-strict-ran'" "'strict-limits'" "'/'" \
		"{'MemoryMax': <uint64 67108864>, 'EnforceLimits': <true>}"
	assert_contains "$ERR_OUT" org.bgrun.Runtime1.Error.LimitNotEnforced "error name"
	assert_contains "$ERR_OUT" "MemoryMax (memory)" "the message names the limit and its controller"
	assert_not_contains "$ERR_OUT" "TasksMax" "a limit not asked for"
	assert_eq "$store" "$(store_count)" "job directories after the refusal"
	assert_eq 0 "$(bgrun list -s strict-limits --json | jq length)" "records after the refusal"
	sleep 0.5
	[[ ! -e /tmp/bgrun-strict-ran ]] || fail "the refused command ran"
	# Without EnforceLimits the same job runs, its limit recorded unenforced.
	id=$(launch 'sleep 300' "{'MemoryMax': <uint64 67108864>}")
	assert_eq MemoryMax "$(jget "$id" '.limits_unenforced | join(" ")')" limits_unenforced
	bgrun kill "$id" >/dev/null
	# EnforceLimits without a limit asked for has nothing to refuse.
	id=$(launch 'echo ok' "{'EnforceLimits': <true>}")
	gcall Wait "'$id'" "uint64 10000000" >/dev/null || fail "Wait failed"
	assert_eq exited "$(job_status "$id")" "EnforceLimits with no limit"
}

# The CLI: run says once per limit that it is not enforced; --strict-limits
# is refused instead, runs nothing and keeps no record.
test_run_says_an_unenforced_limit_and_strict_limits_refuses_it() {
	local id err store
	rm -f /tmp/bgrun-strict-cli-ran
	if grep -qw memory <<<"$(slice_controllers)"; then
		id=$(bgrun run --strict-limits -p MemoryMax=64M -- 'sleep 300' 2>err) || fail "strict run: $(cat err)"
		assert_eq "" "$(cat err)" "stderr of a run whose limits are enforced"
		bgrun kill "$id" >/dev/null
		echo "NOTE: the memory controller is there: MemoryMax enforced, no refusal to see"
		return 0
	fi
	id=$(bgrun run -s cli-limits -p MemoryMax=64M -- 'sleep 300' 2>err) || fail "run: $(cat err)"
	assert_eq 1 "$(grep -c . err)" "lines on stderr: $(cat err)"
	assert_contains "$(cat err)" "MemoryMax is recorded but not enforced" "the line names the limit"
	assert_eq running "$(job_status "$id")" "the job runs"
	bgrun kill "$id" >/dev/null
	# No limit asked: nothing said.
	id=$(bgrun run -s cli-limits -- 'true' 2>err) || fail "run: $(cat err)"
	assert_eq "" "$(cat err)" "stderr of a run without limits"
	store=$(store_count)
	expect_fail bgrun run --strict-limits -s cli-strict -p MemoryMax=64M -- 'touch /tmp/bgrun-strict-cli-ran'
	assert_contains "$ERR_OUT" "Limit not enforced" "the CLI's error"
	assert_contains "$ERR_OUT" "MemoryMax (memory)" "the CLI's error names the limit"
	expect_fail bgrun run --strict-limits --json -s cli-strict -p MemoryMax=64M -- 'touch /tmp/bgrun-strict-cli-ran'
	assert_eq "$store" "$(store_count)" "job directories after the refusals"
	assert_eq 0 "$(bgrun list -s cli-strict --json | jq length)" "records after the refusals"
	sleep 0.5
	[[ ! -e /tmp/bgrun-strict-cli-ran ]] || fail "the refused command ran"
}
