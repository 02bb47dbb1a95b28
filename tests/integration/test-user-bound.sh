# SPDX-License-Identifier: MIT
# Issue #24 in the per-user instance: bgrund --user, on the user's session
# bus and systemd --user manager (bgrun-sandbox-login), binds a `run --wait`
# job to its caller, applies the user's own [Limits] DefaultMaxRuntimeSec=
# and MaxRuntimeSec=, and refuses with --strict-limits a limit that the
# user's delegated cgroup cannot enforce. The system instance's tests are
# test-bound.sh and test-limits.sh.

# A user of its own: no other test's configuration in its home.
BUSER=erin

# The login of BUSER stays up (its manager, bus and bgrund) until the test
# ends; then the manager is stopped, with every job it ran.
hold_user_login() {
	local uid dir
	command -v bgrun-sandbox-login >/dev/null || fail "bgrun-sandbox-login is missing: tools/sandbox puts it on PATH"
	ensure_user "$BUSER"
	uid=$(id -u "$BUSER")
	dir=$(mktemp -d /tmp/bgrun-user-bound.XXXXXX)
	chmod 0755 "$dir"
	on_exit "rm -rf '$dir'"
	bgrun-sandbox-login "$BUSER" -- bash -c "while [ ! -e '$dir/done' ]; do sleep 0.1; done" >"$dir/log" 2>&1 &
	# Run before the line above (last registered, first run): the login
	# ends and is waited for, then its directory goes.
	on_exit "touch '$dir/done'; wait $! 2>/dev/null"
	wait_until 30 bash -c "[[ -S /run/user/$uid/bus && \$(systemctl is-active user@$uid.service) == active ]]" \
		|| fail "the login of $BUSER did not come up: $(cat "$dir/log")"
	# A directory the user writes to, for what its background callers say.
	UDIR=$dir/u
	install -d -m 0700 -o "$BUSER" -g "$BUSER" "$UDIR"
}

# in_user BODY: the bash code BODY as BUSER, in its login.
in_user() {
	bgrun-sandbox-login "$BUSER" -- bash -c "$1"
}

# The record of a job of BUSER's instance, and one of its fields.
urec() { in_user "bgrun --user status $1 --json"; }
uget() { urec "$1" | jq -r "$2"; }
ustatus() { uget "$1" .status; }
is_ustatus() { [[ $(ustatus "$1") == "$2" ]]; }
ustate() { echo "/home/$BUSER/.local/state/bgrun/jobs"; }
ustore_count() { find "$(ustate)" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# The id of the newest job of session S.
unewest_of() { in_user "bgrun --user list -s $1 --json" | jq -r 'sort_by(.started_at) | last | .id // empty'; }
uhas_job() { [[ -n $(unewest_of "$1") ]]; }
# ulaunch COMMAND SESSION OPTIONS: Launch through gdbus on BUSER's session
# bus (its errors carry the D-Bus error's name); what gdbus printed.
ulaunch() {
	UL_CMD="'$1'" UL_SES="'$2'" UL_CWD="'/'" UL_OPT=$3 in_user 'gdbus call --session --dest org.bgrun.Runtime1 \
		--object-path /org/bgrun/Runtime1 --method org.bgrun.Runtime1.Manager.Launch \
		"$UL_CMD" "$UL_SES" "$UL_CWD" "$UL_OPT" 2>&1'
}
ucg() { local uid; uid=$(id -u "$BUSER"); echo "/user.slice/user-$uid.slice/user@$uid.service"; }

# uconfig LINE...: the user's bgrund.conf, then its bgrund restarted; the
# file goes (and bgrund restarts without it) when the test ends.
uconfig() {
	local conf=/home/$BUSER/.config/bgrun/bgrund.conf
	[[ ! -e $conf ]] || fail "$conf exists already: not this test's to replace"
	on_exit "rm -f '$conf'; in_user 'systemctl --user reset-failed bgrund.service 2>/dev/null; systemctl --user restart bgrund.service' >/dev/null 2>&1"
	in_user "mkdir -p ~/.config/bgrun && printf '%s\n' $(printf "'%s' " "$@") >'$conf'" || fail "cannot write $conf"
	in_user 'systemctl --user reset-failed bgrund.service 2>/dev/null; systemctl --user restart bgrund.service' \
		|| fail "the user's bgrund did not restart with: $*"
}

# (a) A SIGKILLed `bgrun --user run --wait` leaves its job stopped, with the
# job's own StopSignal and within its StopGraceUSec; a plain run's job runs on.
test_user_killed_run_wait_leaves_its_job_stopped() {
	hold_user_login
	local pid id start cg
	in_user "bgrun --user run --wait -s orphan -p StopSignal=INT -p StopGraceUSec=3s -- 'sleep 300' \
		>/dev/null 2>'$UDIR/wait.err' & echo \$! >'$UDIR/wait.pid'" || fail "run --wait did not start"
	pid=$(cat "$UDIR/wait.pid")
	on_exit "kill -KILL $pid 2>/dev/null"
	wait_until 15 uhas_job orphan || fail "run --wait's job never appeared: $(cat "$UDIR/wait.err")"
	id=$(unewest_of orphan)
	wait_until 10 is_ustatus "$id" running || fail "the job never ran: $(ustatus "$id")"
	assert_eq true "$(uget "$id" .bind_to_caller)" "run --wait binds its job in the user instance"
	pid_alive "$pid" || fail "run --wait left before it was killed: $(cat "$UDIR/wait.err")"
	start=$SECONDS
	kill -KILL "$pid"
	wait_until 10 is_ustatus "$id" killed || fail "the job of a SIGKILLed run --wait: $(ustatus "$id")"
	# Its grace is 3 s; sleep ends at once at its StopSignal.
	assert_le $((SECONDS - start)) 6 "seconds until it was stopped"
	assert_eq 2 "$(uget "$id" .signal)" "the signal that ended it: its own StopSignal"
	assert_eq signal "$(uget "$id" .teardown.method)" "teardown.method: ended within the grace"
	assert_eq true "$(uget "$id" .teardown.dead)" "teardown.dead"
	cg=$(uget "$id" .containment.cgroup)
	[[ $cg == "$(ucg)/bgrun.slice/bgrun-job-$id.scope/"* ]] || fail "not a job of the user's manager: '$cg'"
	[[ -z $(all_procs_below "$CG$cg") ]] || fail "the job's cgroup still has processes"

	# A job that ignores its StopSignal is killed once its own grace is over.
	in_user "bgrun --user run --wait -s stubborn -p StopSignal=INT -p StopGraceUSec=2s -- 'trap \"\" INT; sleep 300' \
		>/dev/null 2>'$UDIR/wait2.err' & echo \$! >'$UDIR/wait2.pid'" || fail "run --wait did not start"
	pid=$(cat "$UDIR/wait2.pid")
	on_exit "kill -KILL $pid 2>/dev/null"
	wait_until 15 uhas_job stubborn || fail "run --wait's job never appeared: $(cat "$UDIR/wait2.err")"
	id=$(unewest_of stubborn)
	wait_until 10 is_ustatus "$id" running || fail "the job never ran: $(ustatus "$id")"
	start=$(date +%s%N)
	kill -KILL "$pid"
	wait_until 12 is_ustatus "$id" killed || fail "the stubborn job of a SIGKILLed run --wait: $(ustatus "$id")"
	assert_le 1900 $((($(date +%s%N) - start) / 1000000)) "ms until the job that ignores SIGINT was killed (its grace: 2 s)"
	assert_eq cgroup.kill "$(uget "$id" .teardown.method)" "teardown.method after the grace"
	assert_eq true "$(uget "$id" .teardown.dead)" "teardown.dead"

	# A plain run is detached by design: its bgrun left, the job runs on.
	id=$(in_user "bgrun --user run -s detached -- 'sleep 300'") || fail "bgrun --user run: $id"
	sleep 1
	assert_eq running "$(ustatus "$id")" "a plain run's job after its bgrun left"
	assert_eq false "$(uget "$id" .bind_to_caller)" "a plain run binds nothing"
	in_user "bgrun --user kill $id >/dev/null" || fail "kill $id"
}

# (b) The user's own [Limits]: DefaultMaxRuntimeSec= ends a job launched
# without a limit as timed_out; MaxRuntimeSec= refuses a longer request.
test_user_max_runtime_keys_of_the_users_config() {
	hold_user_login
	uconfig '[Limits]' DefaultMaxRuntimeSec=2 MaxRuntimeSec=1h
	local id start out store
	start=$SECONDS
	id=$(in_user "bgrun --user run -s rt -p StopGraceUSec=0 -- 'sleep 300'") || fail "run: $id"
	assert_eq 2000000 "$(uget "$id" .limits.MaxRuntimeUSec)" "the record's MaxRuntimeUSec: the user's default"
	wait_until 15 is_ustatus "$id" timed_out || fail "a job past DefaultMaxRuntimeSec=: $(ustatus "$id")"
	assert_eq true "$(uget "$id" .timed_out)" timed_out
	assert_le $((SECONDS - start)) 10 "seconds until it ended"
	# A limit of its own, within the maximum, wins over the default.
	id=$(in_user "bgrun --user run -s rt -t 50min -- 'sleep 300'") || fail "run -t 50min: $id"
	assert_eq 3000000000 "$(uget "$id" .limits.MaxRuntimeUSec)" "a limit asked for, within MaxRuntimeSec="
	sleep 3
	assert_eq running "$(ustatus "$id")" "status after the default's time"
	in_user "bgrun --user kill $id >/dev/null" || fail "kill $id"

	# More than MaxRuntimeSec=: refused, nothing started, no record.
	store=$(ustore_count)
	out=$(ulaunch "touch /home/$BUSER/max-runtime-ran" rt "{'MaxRuntimeUSec': <uint64 7200000000>}") \
		&& fail "a job asking for 2 h under MaxRuntimeSec=1h was launched: $out"
	assert_contains "$out" org.bgrun.Runtime1.Error.LimitExceeded "the error of a request above MaxRuntimeSec="
	assert_contains "$out" "MaxRuntimeSec=1h" "the message names the key and its value"
	out=$(in_user "bgrun --user run -s rt -t 2h -- 'touch ~/max-runtime-ran'" 2>&1) && fail "launched: $out"
	assert_contains "$out" "Limit exceeded" "the CLI's error"
	assert_contains "$out" "MaxRuntimeSec=1h" "the CLI's error names the key"
	assert_eq "$store" "$(ustore_count)" "job directories after the refusals"
	sleep 0.5
	[[ ! -e /home/$BUSER/max-runtime-ran ]] || fail "the refused command ran"
}

# The controllers of the user manager's bgrun.slice: what a job of the
# user's instance can have (its scope and payload are below it).
uslice_controllers() { cat "$CG$(ucg)/bgrun.slice/cgroup.controllers" 2>/dev/null; }

# (c) --strict-limits in the user instance. On this host's hybrid layout
# the v2 tree has no memory controller (hugetlb alone), so the user's
# delegated bgrun.slice has none either: MemoryMax (else the first limit
# whose controller is missing there) is refused with LimitNotEnforced,
# nothing runs and no record is kept, and without
# --strict-limits the job runs with the limit recorded unenforced and one
# line on stderr. On a host where the user's tree has all three controllers,
# every limit is enforceable: --strict-limits launches and the record has
# no limits_unenforced (said as a NOTE).
test_user_strict_limits() {
	hold_user_login
	local ctl prop= name= ctrl= gv= id out store
	# A job first: bgrun.slice exists once the instance ran one.
	in_user "bgrun --user run --wait -q -- true" || fail "a first job"
	[[ -d $CG$(ucg)/bgrun.slice ]] || fail "no bgrun.slice in the user's manager"
	ctl=$(uslice_controllers)
	if ! grep -qw memory <<<"$ctl"; then
		prop=MemoryMax=64M name=MemoryMax ctrl=memory gv='<uint64 67108864>'
	elif ! grep -qw pids <<<"$ctl"; then
		prop=TasksMax=64 name=TasksMax ctrl=pids gv='<uint64 64>'
	elif ! grep -qw cpu <<<"$ctl"; then
		prop=CPUQuotaPerSecUSec=50% name=CPUQuotaPerSecUSec ctrl=cpu gv='<uint64 500000>'
	fi
	if [[ -z $prop ]]; then
		id=$(in_user "bgrun --user run --strict-limits -p MemoryMax=64M -p TasksMax=64 -p CPUQuotaPerSecUSec=50% -- 'sleep 300'" 2>err) \
			|| fail "strict run where every limit is enforceable: $(cat err)"
		assert_eq "" "$(cat err)" "stderr of a strict run whose limits are enforced"
		assert_eq null "$(uget "$id" .limits_unenforced)" "limits_unenforced"
		in_user "bgrun --user kill $id >/dev/null"
		echo "NOTE: the user's bgrun.slice has memory, pids and cpu ($ctl): every limit enforced, no refusal to see"
		return 0
	fi
	rm -f "/home/$BUSER/strict-ran"
	store=$(ustore_count)
	out=$(in_user "bgrun --user run --strict-limits -s strict -p $prop -- 'touch ~/strict-ran'" 2>&1) \
		&& fail "--strict-limits launched with $name and no $ctrl controller ($ctl): $out"
	assert_contains "$out" "Limit not enforced" "the CLI's error"
	assert_contains "$out" "$name ($ctrl)" "the CLI's error names the limit and its controller"
	out=$(ulaunch "touch /home/$BUSER/strict-ran" strict "{'$name': $gv, 'EnforceLimits': <true>}") \
		&& fail "EnforceLimits launched with $name and no $ctrl controller: $out"
	assert_contains "$out" org.bgrun.Runtime1.Error.LimitNotEnforced "the error's name"
	assert_contains "$out" "$name ($ctrl)" "the error names the limit and its controller"
	assert_eq "$store" "$(ustore_count)" "job directories after the refusals"
	assert_eq 0 "$(in_user 'bgrun --user list -s strict --json' | jq length)" "records after the refusals"
	sleep 0.5
	[[ ! -e /home/$BUSER/strict-ran ]] || fail "the refused command ran"
	# Without --strict-limits: it runs, recorded unenforced, said once.
	id=$(in_user "bgrun --user run -s lax -p $prop -- 'sleep 300'" 2>err) || fail "run: $(cat err)"
	assert_eq 1 "$(grep -c . err)" "lines on stderr: $(cat err)"
	assert_contains "$(cat err)" "$name is recorded but not enforced" "the line names the limit"
	assert_eq "$name" "$(uget "$id" '.limits_unenforced | join(" ")')" limits_unenforced
	assert_eq running "$(ustatus "$id")" "the job runs"
	in_user "bgrun --user kill $id >/dev/null" || fail "kill $id"
	# --strict-limits without a limit has nothing to refuse.
	out=$(in_user "bgrun --user run --strict-limits --wait -q -- 'echo ok'") || fail "strict run without a limit: $out"
	assert_eq ok "$out" "output of a strict run without a limit"
}
