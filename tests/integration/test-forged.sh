# SPDX-License-Identifier: MIT
# Trust only the bus (issue #30): what bob sends bgrund in the bus daemon's
# or systemd's place changes nothing. A unicast signal reaches the
# connection it is addressed to whatever its match rules say, so each of
# bgrund's handlers checks the sender itself; a direct connection's sender
# field is its peer's say-so, and is refused.

FORGE=$CLIENTS_DIR/forge.py

# bgrund's connections to the system bus: the API's and the systemd
# mechanism's own.
bgrund_names() { /usr/bin/python3 "$FORGE" names "$1"; }

# The unique name of the connection of process PID (one connection).
name_of_pid() { bgrund_names "$1" | head -n1; }

is_status() { [[ $(job_status "$1") == "$2" ]]; }

# bound_holder USER FILE: a caller as USER that launches `sleep 300` bound
# and holds its connection; FILE gets the job's id. Its pid in HOLDER
# (setpriv execs it: as_user, a function, would run in a subshell of its own).
bound_holder() {
	local user=$1 file=$2
	: >"$file" # empty before the wait below looks: the tests share a directory
	setpriv --reuid="$user" --regid="$user" --init-groups --reset-env -- env -C / /usr/bin/python3 "$CLIENTS_DIR/bound-launch.py" 'sleep 300' >"$file" 2>"$file.err" &
	HOLDER=$!
	on_exit "kill -KILL $HOLDER 2>/dev/null"
	wait_until 10 test -s "$file" || fail "bound-launch.py as $user: $(cat "$file.err")"
}

caller_of() { jq -r .caller "/var/lib/bgrun/jobs/$1/spec.json"; }

# forge_gone NAME...: bob says each NAME left, to every bgrund connection
# and to its well-known name.
forge_gone() {
	local dests name
	mapfile -t dests < <(bgrund_names "$(bgrund_pid)")
	((${#dests[@]} >= 2)) || fail "bgrund's connections: ${dests[*]}"
	for name in "$@"; do
		as_user bob env -C / /usr/bin/python3 "$FORGE" name-gone "$name" org.bgrun.Runtime1 "${dests[@]}" ||
			fail "forge.py name-gone"
	done
}

test_a_forged_name_owner_changed_stops_no_bound_job_and_drops_no_wait() {
	setup_users
	local root_id alice_id root_holder waiter waiter_name sub sub_pid cursor
	# bgrund's log from here on: earlier tests' bound jobs did end so.
	journalctl --sync
	cursor=$(journalctl -n 0 --show-cursor -q | sed -n 's/^-- cursor: //p')
	[[ -n $cursor ]] || fail "no journal cursor"
	bound_holder root root.id
	root_holder=$HOLDER root_id=$(cat root.id)
	bound_holder alice alice.id
	alice_id=$(cat alice.id)
	wait_until 10 is_status "$root_id" running || fail "root's bound job: $(job_status "$root_id")"
	wait_until 10 is_status "$alice_id" running || fail "alice's bound job: $(job_status "$alice_id")"
	# Root waits on its job, and a subscriber of root's follows its signals.
	bgrun wait "$root_id" >wait.out 2>wait.err &
	waiter=$!
	on_exit "kill $waiter 2>/dev/null"
	/usr/bin/python3 "$CLIENTS_DIR/subscribe.py" 60 >sub.out &
	sub_pid=$!
	on_exit "kill $sub_pid 2>/dev/null"
	wait_until 10 grep -q ready sub.out || fail "subscriber not ready"
	wait_until 10 test -n "$(name_of_pid "$waiter")" || fail "bgrun wait has no connection"
	waiter_name=$(name_of_pid "$waiter")
	sub=$(name_of_pid "$sub_pid")

	forge_gone "$(caller_of "$root_id")" "$(caller_of "$alice_id")" "$waiter_name" "$sub"
	sleep 1
	assert_eq running "$(job_status "$root_id")" "root's bound job after bob's forged NameOwnerChanged"
	assert_eq running "$(job_status "$alice_id")" "alice's bound job after bob's forged NameOwnerChanged"
	pid_alive "$waiter" || fail "root's bgrun wait ended: $(cat wait.err)"
	journalctl --sync
	assert_not_contains "$(journalctl -u bgrund.service --after-cursor "$cursor" --no-pager -q)" "closed; stopping it" "bgrund's log"

	# The wait and the subscription were kept: the job's end reaches both.
	bgrun kill "$root_id" >/dev/null || fail "kill root's job"
	wait_until 10 eval '! pid_alive $waiter' || fail "root's bgrun wait never got its answer"
	wait "$waiter"
	assert_eq 137 "$?" "bgrun wait's exit status: the killed job's, as timeout(1) has it"
	wait_until 5 grep -q "\"JobRemoved\".*$root_id" sub.out || fail "the subscriber never saw JobRemoved: $(cat sub.out)"
	# The bus daemon's own word still counts: root's holder leaves.
	kill -KILL "$root_holder" 2>/dev/null
	bgrun kill "$alice_id" >/dev/null
}

test_a_forged_job_removed_fails_no_launch() {
	[[ ${BGRUN_SANDBOX_KIND:-systemd} == systemd ]] || skip "needs the private systemd (tools/sandbox)"
	setup_users
	# alice's slice waits for a unit of ours before it starts, so her
	# job scope's start job is pending while bob forges its end. (A slice
	# without a unit file takes drop-ins, as test-containment's do.)
	local slice units launcher unit dests id
	slice=$(owner_slice "$ALICE")
	# The sandbox's own unit path, beside bgrund's.
	units=$(dirname "$(systemctl show -P FragmentPath bgrund.service)")
	mkdir -p "$units/$slice.d"
	printf '[Unit]\nWants=bgrun-test-slow.service\nAfter=bgrun-test-slow.service\n' >"$units/$slice.d/50-slow.conf"
	# It ends when the test says so, after bob's forgery: no race with
	# systemd's own JobRemoved, however slow the machine.
	rm -f /run/bgrun-test-slow-go
	printf '[Service]\nType=oneshot\nTimeoutStartSec=25\nExecStart=/bin/sh -c "while [ ! -e /run/bgrun-test-slow-go ]; do sleep 0.1; done"\n' \
		>"$units/bgrun-test-slow.service"
	on_exit "touch /run/bgrun-test-slow-go; rm -rf '$units/$slice.d' '$units/bgrun-test-slow.service'; systemctl daemon-reload"
	systemctl daemon-reload
	systemctl stop "$slice" 2>/dev/null
	: >alice.id
	setpriv --reuid=alice --regid=alice --init-groups --reset-env -- env -C / "$BGRUN" run -s forged -- 'sleep 300' >alice.id 2>alice.err &
	launcher=$!
	# Every user sees systemd's queued jobs, and so the unit's name.
	wait_until 10 eval '[[ -n $(as_user bob systemctl list-jobs --no-legend | awk "/bgrun-job-.*scope/ { print \$2 }") ]]' ||
		fail "no job scope waiting to start: $(systemctl list-jobs --no-legend)"
	unit=$(as_user bob systemctl list-jobs --no-legend | awk '/bgrun-job-.*scope/ { print $2; exit }')
	mapfile -t dests < <(bgrund_names "$(bgrund_pid)")
	as_user bob env -C / /usr/bin/python3 "$FORGE" job-removed "$unit" org.bgrun.Runtime1 "${dests[@]}" ||
		fail "forge.py job-removed"
	# forge.py's round trip put it in the bus daemon's queues; bgrund reads
	# it long before the real one, which waits for this file.
	sleep 0.5
	touch /run/bgrun-test-slow-go
	wait "$launcher" || fail "alice's launch failed after bob's forged JobRemoved: $(cat alice.err)"
	id=$(cat alice.id)
	wait_until 10 is_status "$id" running || fail "alice's job: $(job_status "$id")"
	assert_eq systemd "$(jget "$id" .containment.mechanism)" "the job's mechanism"
	bgrun kill "$id" >/dev/null
}

# bgrund --listen serving the bus and the socket together: bob on the bus
# names a peer's :p2p.N, and a peer names another's sender.
test_forged_signals_and_senders_reach_no_direct_peer() {
	[[ ${BGRUN_SANDBOX_KIND:-systemd} == systemd ]] || skip "needs the private systemd (tools/sandbox)"
	setup_users
	local listen=unix:path=/run/bgrun/bus id pid out dests
	systemctl stop bgrund.service
	on_exit "systemctl stop bgrund-listen.service 2>/dev/null; systemctl reset-failed bgrund-listen.service bgrund.service 2>/dev/null; systemctl start bgrund.service"
	systemd-run --quiet --unit=bgrund-listen -p Type=notify "$BGRUN_LIBEXECDIR/bgrund" --listen ||
		fail "bgrund --listen did not start"
	pid=$(systemctl show -P MainPID bgrund-listen.service)
	# alice's peer launches a bound job and holds its connection.
	setpriv --reuid=alice --regid=alice --init-groups --reset-env -- env -C / BGRUN_ADDRESS=$listen "$BGRUN" run --wait -s forged-p2p -- 'sleep 300' >/dev/null 2>&1 &
	local waiter=$!
	on_exit "kill -KILL $waiter 2>/dev/null"
	wait_until 10 eval '[[ $(bgrun list -s forged-p2p --status running --json | jq length) == 1 ]]' ||
		fail "alice's job over the socket never ran"
	id=$(bgrun list -s forged-p2p --json | jq -r '.[0].id')
	assert_eq true "$(jget "$id" .bind_to_caller)" "run --wait over the socket binds"
	mapfile -t dests < <(bgrund_names "$pid")
	for n in 1 2 3 4 5 6 7 8; do
		as_user bob env -C / /usr/bin/python3 "$FORGE" name-gone ":p2p.$n" org.bgrun.Runtime1 "${dests[@]}" ||
			fail "forge.py name-gone :p2p.$n"
	done
	# A peer of bob's: forged signals on its own connection, and a call
	# under root's bus name.
	local root_name root_id
	bound_holder root root.id
	root_id=$(cat root.id)
	root_name=$(caller_of "$root_id")
	out=$(as_user bob env -C / /usr/bin/python3 "$FORGE" p2p "$listen" "$root_id" "$root_name" ":p2p.1" ":p2p.2" 2>&1) ||
		fail "forge.py p2p: $out"
	# Under root's bus name, bob's peer would read root's job.
	assert_contains "$out" "named org.freedesktop.DBus.Error.AccessDenied" "bob's Get of root's job naming root's bus name as its sender"
	assert_contains "$out" "plain org.bgrun.Runtime1.Error.NoSuchJob" "bob's Get of root's job as himself, after the forged signals"
	sleep 1
	systemctl is-active --quiet bgrund-listen.service || fail "bgrund --listen died"
	assert_eq running "$(job_status "$id")" "alice's bound job over the socket"
	assert_eq running "$(job_status "$root_id")" "root's bound job on the bus"
	pid_alive "$waiter" || fail "alice's run --wait over the socket ended"
	bgrun kill "$id" "$root_id" >/dev/null
}
