# SPDX-License-Identifier: MIT
# The path of a job through bgrund, systemd and the supervisor (issue #3),
# through the real bgrun CLI and busctl.

test_captured_output_and_record() {
	id=$(bgrun run -- printf captured) || fail "launch failed"
	bgrun wait "$id" >/dev/null
	assert_eq captured "$(bgrun logs "$id")" "output"
	rec=$(bgrun status "$id" --json)
	assert_eq exited "$(jq -r .status <<<"$rec")" status
	assert_eq 0 "$(jq -r .exit_code <<<"$rec")" exit_code
	assert_eq systemd "$(jq -r .containment.mechanism <<<"$rec")" mechanism
	assert_eq true "$(jq -r .containment.contained <<<"$rec")" contained
	assert_eq true "$(jq -r .containment.executed <<<"$rec")" executed
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" dead
	assert_eq "bgrun-job-$id.scope" "$(jq -r .containment.unit <<<"$rec")" unit
	assert_eq 8 "$(jq -r .output_bytes <<<"$rec")" output_bytes
	assert_eq 0 "$(jq -r .owner <<<"$rec")" owner
	jq -e '.started_at > 0 and .finished_at >= .started_at' <<<"$rec" >/dev/null ||
		fail "started_at/finished_at: $(jq -c '[.started_at, .finished_at]' <<<"$rec")"
	# The unit is collected once the job ended.
	wait_until 5 bash -c "! systemctl list-units --all --plain --no-legend | grep -q bgrun-job-$id" ||
		fail "unit bgrun-job-$id.scope still loaded"
}

test_output_readable_while_running() {
	id=$(bgrun run -- 'printf progress; sleep 5')
	wait_until 5 bash -c "[[ \$(bgrun logs $id) == progress ]]" || fail "no output while running"
	assert_eq running "$(job_status "$id")" status
	out=$(busctl --json=short call "${MGR[@]}" ReadOutput stu "$id" 0 1024)
	assert_eq '[112,114,111,103,114,101,115,115]' "$(jq -c '.data[0]' <<<"$out")" "ReadOutput data"
	assert_eq 8 "$(jq -r '.data[1]' <<<"$out")" "ReadOutput next"
	assert_eq false "$(jq -r '.data[2]' <<<"$out")" "ReadOutput complete while running"
	bgrun kill "$id" >/dev/null
	# Kill answers at the confirmation; the output is final with the record.
	bgrun wait "$id" >/dev/null
	out=$(busctl --json=short call "${MGR[@]}" ReadOutput stu "$id" 0 1024)
	assert_eq true "$(jq -r '.data[2]' <<<"$out")" "ReadOutput complete after the end"
}

test_wall_clock_limit() {
	start=$(date +%s%N)
	id=$(bgrun run -t 1s -- sleep 60)
	bgrun wait "$id" >/dev/null
	elapsed_ms=$((($(date +%s%N) - start) / 1000000))
	rec=$(bgrun status "$id" --json)
	assert_eq timed_out "$(jq -r .status <<<"$rec")" status
	assert_eq true "$(jq -r .timed_out <<<"$rec")" timed_out
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" dead
	assert_le "$elapsed_ms" 5000 "ms from launch to end with a 1 s limit"
	bgrun run --wait -t 1s -- sleep 60 >/dev/null
	assert_eq 124 "$?" "run --wait exit status on timeout"
}

test_kill_reaches_escaping_children() {
	# setsid, a double fork and a TERM-ignoring child: each prints its pid.
	id=$(bgrun run -- 'setsid sleep 301 & echo "pid $!"; (sleep 302 & echo "pid $!"); trap "" TERM; (trap "" TERM; sleep 303) & echo "pid $!"; echo "pid $$"; sleep 304')
	wait_until 5 bash -c "[[ \$(bgrun logs $id | grep -c '^pid') == 4 ]]" || fail "job did not report its pids"
	pids=$(bgrun logs "$id" | awk '/^pid/ {print $2}')
	for p in $pids; do pid_alive "$p" || fail "pid $p not running before the kill"; done
	res=$(bgrun kill "$id" --json)
	assert_eq true "$(jq -r .killed <<<"$res")" killed
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	assert_eq cgroup.kill "$(jq -r .teardown.method <<<"$res")" method
	for p in $pids; do ! pid_alive "$p" || fail "pid $p of the job survived the kill"; done
	assert_eq killed "$(job_status "$id")" status
	cg=$(jget "$id" .containment.cgroup)
	[[ $cg == $ROOT_SLICE_CG/bgrun-job-$id.scope/* ]] || fail "containment.cgroup: '$cg'"
	[[ -z $(all_procs_below "$CG$cg") ]] || fail "cgroup $cg still has processes: $(all_procs_below "$CG$cg")"
}

test_concurrent_jobs_have_their_own_output_and_unit() {
	ids=()
	for n in A B C; do
		ids+=("$(bgrun run -- "for i in 1 2 3; do echo $n\$i; sleep 0.1; done")")
	done
	units=()
	for i in 0 1 2; do
		bgrun wait "${ids[$i]}" >/dev/null
		n=$(echo A B C | cut -d' ' -f$((i + 1)))
		assert_eq "$(printf '%s1\n%s2\n%s3' $n $n $n)" "$(bgrun logs "${ids[$i]}")" "output of job $n"
		units+=("$(jget "${ids[$i]}" .containment.unit)")
	done
	assert_eq 3 "$(printf '%s\n' "${units[@]}" | sort -u | wc -l)" "distinct units"
}

test_concurrent_launches_in_parallel() {
	for n in 1 2 3; do
		(bgrun run --wait -- "echo job$n" >"out$n") &
	done
	wait
	for n in 1 2 3; do assert_eq "job$n" "$(cat out$n)" "output of parallel job $n"; done
}

test_exit_code_and_signal() {
	bgrun run --wait -- 'exit 3'
	assert_eq 3 "$?" "run --wait exit status"
	id=$(bgrun run -- 'exit 3')
	bgrun wait "$id" >/dev/null
	assert_eq 3 "$(jget "$id" .exit_code)" exit_code
	id=$(bgrun run -- 'kill -USR1 $$')
	bgrun wait "$id" >/dev/null
	assert_eq -1 "$(jget "$id" .exit_code)" "exit_code after a signal"
	assert_eq 10 "$(jget "$id" .signal)" "signal"
	bgrun run --wait -- 'kill -USR1 $$'
	assert_eq 138 "$?" "run --wait exit status after SIGUSR1"
}

restart_keeps_job() { # how: restart|sigkill
	id=$(bgrun run -- 'i=0; while :; do echo line$i; i=$((i+1)); sleep 0.1; done')
	wait_until 5 bash -c "bgrun logs $id | grep -q line2" || fail "no output"
	old=$(bgrund_pid)
	systemctl reset-failed bgrund.service # earlier restarts count toward the start limit
	if [[ $1 == restart ]]; then
		systemctl restart bgrund.service
	else
		kill -9 "$old"
		# Restart=on-failure brings it back.
		wait_until 10 bash -c "[[ \$(systemctl show -P MainPID bgrund.service) != 0 && \$(systemctl show -P MainPID bgrund.service) != $old ]] && systemctl is-active -q bgrund" ||
			fail "bgrund did not come back after SIGKILL"
	fi
	assert_ne "$old" "$(bgrund_pid)" "bgrund pid after $1"
	wait_until 5 busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.freedesktop.DBus.Peer Ping || fail "bgrund does not answer"
	assert_eq running "$(job_status "$id")" "status after $1"
	n1=$(jget "$id" .output_bytes)
	sleep 0.5
	n2=$(jget "$id" .output_bytes)
	((n2 > n1)) || fail "output stopped growing after $1 ($n1 -> $n2)"
	# logs -f follows until the kill ends the job.
	(bgrun logs -f "$id" >follow.out) &
	follower=$!
	sleep 0.3
	res=$(bgrun kill "$id" --json)
	assert_eq true "$(jq -r .killed <<<"$res")" "killed after $1"
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" "dead after $1"
	wait_until 5 bash -c "! kill -0 $follower" || fail "logs -f did not end with the job"
	grep -q line0 follow.out || fail "logs -f missed the beginning"
}

test_job_survives_bgrund_restart() { restart_keeps_job restart; }
test_job_survives_bgrund_sigkill() { restart_keeps_job sigkill; }

test_busctl_launch_and_introspect() {
	out=$(busctl --json=short call "${MGR[@]}" Launch 'sssa{sv}' 'echo via-busctl' mysession / 1 MaxRuntimeUSec t 60000000)
	id=$(jq -r '.data[0]' <<<"$out")
	assert_eq "/org/bgrun/Runtime1/job/$id" "$(jq -r '.data[1]' <<<"$out")" "job path"
	busctl call "${MGR[@]}" Wait st "$id" 10000000 >/dev/null
	assert_eq via-busctl "$(bgrun logs "$id")" output
	assert_eq mysession "$(jget "$id" .session_id)" session
	intro=$(busctl introspect org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager)
	for m in Launch Get ListJobs Kill ReadOutput OpenOutput Wait Forget Reap JobNew JobRemoved Version ContainmentMode Mechanisms RunningJobs; do
		assert_contains "$intro" "$m" "Manager introspection"
	done
	assert_eq '"exited"' "$(busctl get-property org.bgrun.Runtime1 "/org/bgrun/Runtime1/job/$id" org.bgrun.Runtime1.Job status | cut -d' ' -f2)" "job status property"
	assert_contains "$(busctl tree org.bgrun.Runtime1)" "/org/bgrun/Runtime1/job/$id" "busctl tree"
	list=$(busctl --json=short call "${MGR[@]}" ListJobs s mysession)
	assert_eq "$id mysession exited" "$(jq -r --arg id "$id" '.data[0][] | select(.[0] == $id) | "\(.[0]) \(.[1]) \(.[2])"' <<<"$list")" "ListJobs by session"
	assert_eq 0 "$(jq -r '[.data[0][] | select(.[1] != "mysession")] | length' <<<"$list")" "jobs of other sessions listed"
}

test_wait_does_not_block_other_callers() {
	id=$(bgrun run -- 'sleep 3')
	(busctl --timeout=30 call "${MGR[@]}" Wait st "$id" 20000000 >wait.out) &
	waiter=$!
	sleep 0.2
	start=$(date +%s%N)
	bgrun status "$id" >/dev/null || fail "Get failed while a Wait is pending"
	bgrun list >/dev/null || fail "ListJobs failed while a Wait is pending"
	ms=$((($(date +%s%N) - start) / 1000000))
	assert_le "$ms" 1500 "ms for Get+ListJobs while a Wait is pending"
	kill -0 "$waiter" 2>/dev/null || fail "Wait returned before the job ended"
	wait "$waiter"
	assert_contains "$(cat wait.out)" exited "Wait's record"
}

test_signals_job_new_and_removed() {
	# Signals go only to connections that subscribed (the contract's
	# Subscribe); this one does, first.
	(/usr/bin/python3 "$CLIENTS_DIR/subscribe.py" 10 >signals.out 2>&1) &
	mon=$!
	wait_until 5 grep -q '^ready' signals.out || fail "subscriber not ready: $(cat signals.out)"
	id=$(bgrun run -- true)
	bgrun wait "$id" >/dev/null
	sleep 0.3
	kill "$mon" 2>/dev/null; wait "$mon" 2>/dev/null
	grep -q '"member": "JobNew"' signals.out || fail "no JobNew signal"
	grep -q '"member": "JobRemoved"' signals.out || fail "no JobRemoved signal"
	grep -q "$id" signals.out || fail "signals do not name job $id"
}

test_forget_removes_record_and_output() {
	id=$(bgrun run -- 'sleep 2')
	expect_fail bgrun forget "$id"
	assert_contains "$ERR_OUT" "running" "Forget on a running job"
	expect_fail gcall Forget "'$id'"
	assert_contains "$ERR_OUT" "JobNotFinished" "Forget error name"
	bgrun kill "$id" >/dev/null
	bgrun forget "$id" || fail "forget failed"
	[[ ! -e /var/lib/bgrun/jobs/$id ]] || fail "record of $id still on disk"
	expect_fail bgrun status "$id"
}

test_limits_reach_the_unit() {
	id=$(bgrun run -p MemoryMax=64M -p TasksMax=32 -p CPUQuotaPerSecUSec=50% -t 1h -- 'sleep 30')
	unit=bgrun-job-$id.scope
	assert_eq 67108864 "$(systemctl show -P MemoryMax "$unit")" MemoryMax
	assert_eq 32 "$(systemctl show -P TasksMax "$unit")" TasksMax
	assert_eq 500ms "$(systemctl show -P CPUQuotaPerSecUSec "$unit")" CPUQuotaPerSecUSec
	# The wall-clock limit is the supervisor's; systemd gets a backstop after
	# it and the stop's grace (5 s by default).
	assert_eq "1h 1min 5s" "$(systemctl show -P RuntimeMaxUSec "$unit")" RuntimeMaxUSec
	bgrun kill "$id" >/dev/null
}

test_memory_limit_is_enforced() {
	grep -qw memory "$CG/cgroup.controllers" ||
		skip "no memory controller in this cgroup v2 hierarchy (hybrid layout): MemoryMax is recorded, not enforced"
	id=$(bgrun run -p MemoryMax=32M -- 'sleep 30')
	assert_eq 33554432 "$(cat "$CG$ROOT_SLICE_CG/bgrun-job-$id.scope/memory.max")" "the kernel's memory.max for the job"
	bgrun kill "$id" >/dev/null
}

test_job_runs_in_its_own_scope_outside_bgrund() {
	id=$(bgrun run -- 'sleep 30') || fail "launch failed"
	scope=bgrun-job-$id.scope
	assert_eq active "$(systemctl is-active "$scope")" "state of $scope"
	assert_eq "$ROOT_SLICE" "$(systemctl show -P Slice "$scope")" slice
	sup=$(supervisor_pid "$id")
	pid=$(jget "$id" .pid)
	assert_eq "0::$ROOT_SLICE_CG/$scope/supervisor" "$(grep '^0::' "/proc/$sup/cgroup")" "supervisor's cgroup"
	assert_eq "0::$ROOT_SLICE_CG/$scope/payload" "$(grep '^0::' "/proc/$pid/cgroup")" "command's cgroup"
	# bgrund spawns the supervisor, so nothing of bgrund's own sandbox may
	# reach the job: it shares PID 1's mount and UTS namespaces.
	for ns in mnt uts; do
		assert_eq "$(readlink /proc/1/ns/$ns)" "$(readlink "/proc/$pid/ns/$ns")" "the job's $ns namespace"
	done
	bgrun kill "$id" >/dev/null
	wait_until 5 bash -c "! systemctl is-active -q $scope" || fail "$scope still active after the kill"
}

# What bgrund's own process carries (umask, ignored signals, its session
# keyring, its raised open-files limit) must not reach the command: the
# supervisor is bgrund's child, no longer a fresh process from PID 1.
test_job_gets_a_clean_process_state() {
	id=$(bgrun run -- 'umask; sleep 30') || fail "launch failed"
	pid=$(jget "$id" .pid)
	wait_until 5 bash -c "[[ -s /var/lib/bgrun/jobs/$id/output ]]" || fail "no output"
	assert_eq 0022 "$(bgrun logs "$id")" "the command's umask"
	assert_eq "0 1 2" "$(ls /proc/"$pid"/fd | sort -n | xargs)" "the command's open descriptors"
	scope=$CG$ROOT_SLICE_CG/bgrun-job-$id.scope
	assert_eq 755 "$(stat -c %a "$scope/payload")" "mode of the payload cgroup"
	# Standard signals 1-31 (glibc keeps 32 and 33 for itself).
	ign=$(awk '/^SigIgn:/ {print $2}' "/proc/$pid/status")
	((0x$ign & 0x7fffffff)) && fail "the command ignores standard signals (SigIgn $ign)"
	soft() { awk '/^Max open files/ {print $4}' "/proc/$1/limits"; }
	hard() { awk '/^Max open files/ {print $5}' "/proc/$1/limits"; }
	assert_eq "$(hard "$(bgrund_pid)")" "$(soft "$(bgrund_pid)")" "bgrund's raised soft limit of open files"
	assert_eq "$(systemctl show -P LimitNOFILESoft bgrund.service)" "$(soft "$pid")" \
		"the command's soft limit of open files (the one systemd gave bgrund)"
	bgrun kill "$id" >/dev/null
}

test_each_job_has_its_own_session_keyring() {
	case $(uname -m) in
	x86_64) nr=250 ;; aarch64) nr=219 ;;
	*) skip "no keyctl syscall number known for $(uname -m)" ;;
	esac
	# keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0)
	cmd="python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall($nr, 0, -3, 0))'; sleep 30"
	a=$(bgrun run -- "$cmd") && b=$(bgrun run -- "$cmd") || fail "launch failed"
	wait_until 5 bash -c "[[ -s /var/lib/bgrun/jobs/$a/output && -s /var/lib/bgrun/jobs/$b/output ]]" ||
		fail "no keyring ids printed"
	ka=$(bgrun logs "$a") kb=$(bgrun logs "$b")
	[[ $ka =~ ^[0-9]+$ && $kb =~ ^[0-9]+$ ]] || fail "keyring ids: '$ka' '$kb'"
	[[ $ka != "$kb" ]] || fail "two jobs share session keyring $ka"
	bgrun kill "$a" >/dev/null
	bgrun kill "$b" >/dev/null
}

# A listing is answered in slices (bus-listing.c), a turn of the loop each,
# below every message waiting: whole and in order when nothing changes,
# and, with Forgets served between its slices, never naming a job forgotten
# before it reached it, nor missing one that stayed.
test_a_listing_built_in_slices_is_whole() {
	local session=slices-$$ i
	for i in $(seq 300); do bgrun run -q -s "$session" -- true >/dev/null || fail "launch $i"; done
	bgrun wait $(bgrun list -s "$session" --json | jq -r '.[].id') >/dev/null 2>&1
	local daemon
	daemon=$(bgrund_pid)
	on_exit "kill -CONT $daemon 2>/dev/null"
	timeout 120 /usr/bin/python3 - "$session" "$daemon" <<'PY' || fail "the listings"
import asyncio, os, signal, sys
from dbus_next import BusType, Message
from dbus_next.aio import MessageBus
NAME, PATH, IFACE = "org.bgrun.Runtime1", "/org/bgrun/Runtime1", "org.bgrun.Runtime1.Manager"
session = sys.argv[1]
async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    mgr = bus.get_proxy_object(NAME, PATH, await bus.introspect(NAME, PATH)).get_interface(IFACE)
    ids = [row[0] for row in await mgr.call_list_jobs(session)]
    assert len(ids) == 300, len(ids)
    paged, after = [], ""
    while True:
        rows, after = await mgr.call_list_jobs_paged(session, after, 70)
        paged += [row[0] for row in rows]
        if not after:
            break
    assert paged == ids, "paged in 70s: the same jobs, in the same order"
    # Forgets served between a listing's slices.
    gone = ids[100:250:2]
    listing = asyncio.ensure_future(mgr.call_list_jobs(session))
    await asyncio.gather(*(mgr.call_forget(i) for i in gone))
    seen = [row[0] for row in await listing]
    kept = [i for i in ids if i not in gone]
    assert all(i in seen for i in kept), "every job that stayed is in it"
    assert seen == [i for i in ids if i in seen], "in order"
    print(f"listed {len(seen)} of {len(ids)} while {len(gone)} were forgotten")
    # At most 16 listings under way on a connection, 32 for a uid over its
    # connections: 20 calls on one connection and 16 on each of two more,
    # all queued while bgrund is stopped, so that every one is read before
    # any listing has had a turn (calls come first, slices after). Each
    # connection has been answered once already: its credentials are known.
    others, buses = [], [bus]
    for _ in range(2):
        b = await MessageBus(bus_type=BusType.SYSTEM).connect()
        i = b.get_proxy_object(NAME, PATH, await b.introspect(NAME, PATH)).get_interface(IFACE)
        await i.call_list_jobs(session)
        others.append(i)
        buses.append(b)
    daemon = int(sys.argv[2])
    os.kill(daemon, signal.SIGSTOP)
    try:
        calls = [[asyncio.ensure_future(mgr.call_list_jobs(session)) for _ in range(20)]]
        calls += [[asyncio.ensure_future(i.call_list_jobs(session)) for _ in range(16)] for i in others]
        # All of them with bgrund: the bus daemon answers a connection's
        # GetId only after routing what that connection sent before it.
        for b in buses:
            await b.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                 interface="org.freedesktop.DBus", member="GetId"))
    finally:
        os.kill(daemon, signal.SIGCONT)
    answers = [await asyncio.gather(*c, return_exceptions=True) for c in calls]
    refused = [[a for a in c if isinstance(a, Exception)] for c in answers]
    for r in refused:
        assert all("LimitExceeded" in str(getattr(a, "type", a)) for a in r), r
    counts = [len(r) for r in refused]
    print(f"NOTE: refused per connection: {counts}")
    assert counts[0] == 4, f"one connection: {counts[0]} of 20 refused, not 4"
    assert sum(counts) == 52 - 32, f"one uid: {52 - sum(counts)} of 52 under way, not 32"
    assert all(len(a) == len(kept) for c in answers for a in c if not isinstance(a, Exception))
asyncio.run(main())
PY
	bgrun forget --ended -s "$session" >/dev/null
}
