# SPDX-License-Identifier: MIT
# bgrund --listen in the private systemd: the API peer to peer on a socket,
# the owner from the socket's peer credentials, and the limits a bus daemon
# would give (issue #11). Each test runs bgrund as a transient service with
# --listen in place of bgrund.service (same state), and puts it back.

LISTEN=unix:path=/run/bgrun/bus
CLIENT=$CLIENTS_DIR/listen-client.py

listen_start() {
	[[ ${BGRUN_SANDBOX_KIND:-systemd} == systemd ]] || skip "needs the private systemd (tools/sandbox)"
	systemctl stop bgrund.service
	trap 'systemctl stop bgrund-listen.service 2>/dev/null; systemctl reset-failed bgrund-listen.service 2>/dev/null
	      systemctl reset-failed bgrund.service 2>/dev/null; systemctl start bgrund.service' EXIT
	# Under tools/test --sanitize, the sanitizers' options bgrund.service has
	# (its drop-in): reports where they are collected, and ASan's quarantine
	# at 2 MB, so that a bound on bgrund's RSS measures bgrund, not the
	# freed memory ASan holds back (256 MB by default).
	local san=()
	[[ -n ${ASAN_OPTIONS:-} ]] && san=(-E "ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=2" -E "UBSAN_OPTIONS=${UBSAN_OPTIONS:-}"
		-E "LSAN_OPTIONS=${LSAN_OPTIONS:-}")
	systemd-run --quiet --unit=bgrund-listen -p Type=notify "${san[@]}" "$BGRUN_LIBEXECDIR/bgrund" --listen ||
		fail "bgrund --listen did not start"
	[[ -S /run/bgrun/bus ]] || fail "no socket at /run/bgrun/bus"
}

listen_pid() { systemctl show -P MainPID bgrund-listen.service; }

# as_user_p2p USER COMMAND...: the user's bgrun on the socket, in / (the
# test's own directory is root's).
as_user_p2p() {
	local user=$1
	shift
	as_user "$user" env -C / BGRUN_ADDRESS=$LISTEN "$@"
}

test_listen_serves_the_api_to_a_p2p_client_and_on_the_bus() {
	listen_start
	[[ $(stat -c %a /run/bgrun/bus) == 666 && $(stat -c %a /run/bgrun) == 755 ]] ||
		fail "socket/dir modes: $(stat -c '%a %n' /run/bgrun /run/bgrun/bus)"
	rec=$(/usr/bin/python3 "$CLIENT" "$LISTEN" launch 'echo p2p') || fail "dbus-next p2p launch: $rec"
	id=$(jq -r .id <<<"$rec")
	assert_eq exited "$(jq -r .status <<<"$rec")" status
	assert_eq 0 "$(jq -r .owner <<<"$rec")" owner
	got=$(busctl --address=$LISTEN call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager Get s "$id") ||
		fail "busctl --address Get failed"
	assert_contains "$got" "echo p2p" "Get over busctl --address"
	assert_eq "p2p" "$(BGRUN_ADDRESS=$LISTEN bgrun logs "$id")" "bgrun logs over the socket"
	# With a bus there too, both are served: the same daemon, the same job.
	assert_eq exited "$(bgrun status "$id" --json | jq -r .status)" "the job over the system bus"
}

test_listen_owner_is_the_peer_and_other_users_see_nothing() {
	listen_start
	ensure_user bgrun-p2p-a
	ensure_user bgrun-p2p-b
	bgrun_bin=$(command -v bgrun)
	out=$(as_user_p2p bgrun-p2p-a "$bgrun_bin" run --wait -- 'id -u') || fail "run as a user over the socket: $out"
	assert_eq "$(id -u bgrun-p2p-a)" "$out" "the job's uid"
	id=$(as_user_p2p bgrun-p2p-a "$bgrun_bin" run -- 'sleep 60') || fail "launch as a user: $id"
	rec=$(bgrun status "$id" --json)
	assert_eq "$(id -u bgrun-p2p-a)" "$(jq -r .owner <<<"$rec")" owner
	as_user_p2p bgrun-p2p-a "$bgrun_bin" status "$id" >/dev/null || fail "the owner cannot see its job"
	expect_fail as_user_p2p bgrun-p2p-b "$bgrun_bin" status "$id"
	assert_contains "$ERR_OUT" "not found" "another user's answer"
	expect_fail as_user_p2p bgrun-p2p-b "$bgrun_bin" kill "$id"
	assert_not_contains "$(as_user_p2p bgrun-p2p-b "$bgrun_bin" list)" "$id" "another user's list"
	# Only root is an admin here: a user cannot Reap.
	expect_fail as_user bgrun-p2p-b busctl --address=$LISTEN call org.bgrun.Runtime1 /org/bgrun/Runtime1 \
		org.bgrun.Runtime1.Manager Reap
	assert_eq running "$(jq -r .status <<<"$(bgrun status "$id" --json)")" "the job after the other user's tries"
	bgrun kill "$id" >/dev/null
}

test_listen_connections_per_uid_are_limited_cleanly() {
	listen_start
	ensure_user bgrun-p2p-a
	out=$(as_user bgrun-p2p-a env -C / /usr/bin/python3 "$CLIENT" "$LISTEN" limit 64 2>&1) || fail "client failed: $out"
	assert_contains "$out" "held 64" "connections held"
	assert_contains "$out" "refused: Call failed: uid $(id -u bgrun-p2p-a) has 64 connections to bgrund open already" "the 65th"
	assert_contains "$out" "then accepted" "a connection once one was closed"
	systemctl is-active -q bgrund-listen.service || fail "bgrund died"
}

# A connection turned down holds one of 16 slots until it heard why: one
# that never calls goes after the authentication timeout, so that 16 quiet
# ones cannot keep every later refusal from being told.
test_listen_turned_down_connections_that_stay_quiet_go() {
	listen_start
	ensure_user bgrun-p2p-q
	out=$(as_user bgrun-p2p-q env -C / /usr/bin/python3 "$CLIENT" "$LISTEN" quiet-refused 64 2>&1) ||
		fail "client failed: $out"
	assert_contains "$out" "held 64" "connections held"
	assert_contains "$out" "quiet 16 of 16 closed" "turned-down connections that never call"
	systemctl is-active -q bgrund-listen.service || fail "bgrund died"
}

test_listen_calls_waiting_per_connection_are_limited_and_go_with_it() {
	listen_start
	id=$(BGRUN_ADDRESS=$LISTEN bgrun run -- 'sleep 60') || fail "launch failed"
	out=$(/usr/bin/python3 "$CLIENT" "$LISTEN" waits 130 "$id" 2>&1) || fail "client failed: $out"
	assert_contains "$out" "waiting 128" "Waits held on one connection"
	assert_contains "$out" "refused org.bgrun.Runtime1.Error.LimitExceeded" "past the limit"
	assert_contains "$out" "again ok" "a Wait on a new connection once the first was gone"
	bgrun kill "$id" >/dev/null
}

test_listen_signals_go_to_the_subscriber_connection_that_may_see_them() {
	listen_start
	ensure_user bgrun-p2p-a
	ensure_user bgrun-p2p-b
	bgrun_bin=$(command -v bgrun)
	as_user bgrun-p2p-b env -C / /usr/bin/python3 "$CLIENT" "$LISTEN" subscribe 3 >sub 2>&1 &
	wait_until 5 grep -q subscribed sub || fail "no subscription: $(cat sub)"
	a=$(as_user_p2p bgrun-p2p-a "$bgrun_bin" run -- true) || fail "launch as a"
	b=$(as_user_p2p bgrun-p2p-b "$bgrun_bin" run -- true) || fail "launch as b"
	wait
	assert_contains "$(cat sub)" "JobNew $b" "b's own job"
	assert_not_contains "$(cat sub)" "JobNew $a" "another user's job"
}

test_listen_drops_a_connection_that_never_authenticates() {
	listen_start
	out=$(/usr/bin/python3 "$CLIENT" "$LISTEN" idle 2>&1) || fail "client failed: $out"
	for name in silent nul; do
		t=$(awk -v n=$name '$1 == n {print $2}' <<<"$out")
		[[ $t != never && -n $t ]] || fail "$name connection never dropped: $out"
		awk -v t="$t" 'BEGIN { exit !(t >= 4 && t <= 9) }' || fail "$name dropped after $t s, not about 5 s"
	done
	systemctl is-active -q bgrund-listen.service || fail "bgrund died"
}

test_listen_survives_a_flood_of_garbage() {
	listen_start
	pid=$(listen_pid)
	fds_before=$(ls "/proc/$pid/fd" | wc -l)
	out=$(/usr/bin/python3 "$CLIENT" "$LISTEN" garbage 2>&1) || fail "client failed: $out"
	for name in random-bytes endless-auth-line huge-declared-body bad-header fds-and-a-bad-header; do
		assert_contains "$out" "$name closed" "bgrund hung up on $name"
	done
	assert_contains "$out" "flood 40 of 40 closed" "a flood of garbage connections"
	assert_eq "$pid" "$(listen_pid)" "bgrund's pid after the garbage"
	wait_until 5 bash -c "(( \$(ls /proc/$pid/fd | wc -l) <= $fds_before ))" ||
		fail "bgrund holds $(ls "/proc/$pid/fd" | wc -l) descriptors, $fds_before before"
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
	assert_le "$rss" 51200 "bgrund's VmRSS in KiB after the garbage"
	rec=$(/usr/bin/python3 "$CLIENT" "$LISTEN" launch 'echo still') || fail "bgrund does not answer after the garbage"
	assert_eq exited "$(jq -r .status <<<"$rec")" status
}

# A client that asks for much and reads nothing makes bgrund keep two answers
# at most: its further calls are refused (LimitExceeded), its socket is not
# read meanwhile, and past 64 unread messages it is dropped. 250 ReadOutputs
# of 4 MiB each would otherwise be 1 GiB in bgrund.
test_listen_keeps_little_for_a_client_that_does_not_read() {
	listen_start
	local pid rec id out
	pid=$(listen_pid)
	rec=$(/usr/bin/python3 "$CLIENT" "$LISTEN" launch 'head -c 4194304 /dev/zero') || fail "launch failed: $rec"
	id=$(jq -r .id <<<"$rec")
	# 10 calls: two answered, eight refused, all of it read in the end.
	out=$(/usr/bin/python3 "$CLIENT" "$LISTEN" unread "$id" 10 "$pid") || fail "client failed: $out"
	assert_contains "$out" open "the client that read in the end"
	assert_eq 8 "$(awk '$1 == "bytes" {print $4}' <<<"$out")" "calls refused of 10 ($out)"
	[[ $(awk '$1 == "bytes" {print $2}' <<<"$out") -ge $((2 * 4194304)) ]] || fail "not two whole answers: $out"
	# 250 calls: dropped once 64 were left unread, having cost little.
	out=$(/usr/bin/python3 "$CLIENT" "$LISTEN" unread "$id" 250 "$pid") || fail "client failed: $out"
	assert_le "$(awk '$1 == "rss" {print $2}' <<<"$out")" 65536 "bgrund's VmRSS in KiB with 250 calls unread ($out)"
	assert_contains "$out" closed "bgrund dropped the client that does not read"
	assert_eq "$pid" "$(listen_pid)" "bgrund's pid"
	rec=$(/usr/bin/python3 "$CLIENT" "$LISTEN" launch 'echo still') || fail "bgrund does not answer after it"
	assert_eq exited "$(jq -r .status <<<"$rec")" status
}

# Client libraries ask the bus daemon things as they connect (issue #25):
# dbus-next's proxies ask GetNameOwner and AddMatch, and logged an error for
# each connection when bgrund did not answer them. Over --listen they get a
# bus daemon's answers, and neither the client nor bgrund logs anything.
test_listen_answers_a_bus_daemons_methods_so_clients_work_unchanged() {
	listen_start
	local since out err
	since=$(date '+%Y-%m-%d %H:%M:%S')
	out=$(/usr/bin/python3 "$CLIENTS_DIR/listen-bus-daemon.py" "$LISTEN" client 2>err) ||
		fail "dbus-next client failed: $out $(cat err)"
	err=$(cat err)
	assert_eq "" "$err" "what dbus-next logged"
	assert_contains "$out" "ping ok" "Peer.Ping"
	assert_contains "$out" "get true" "Get after Launch"
	id=$(awk '$1 == "launched" {print $2}' <<<"$out")
	assert_contains "$out" "signal JobNew $id" "JobNew through the proxy (its sender is the name's owner)"
	assert_contains "$out" "owner :p2p.0" "GetNameOwner org.bgrun.Runtime1"
	assert_contains "$out" "has True" "NameHasOwner org.bgrun.Runtime1"
	[[ $out =~ hello\ :p2p\.[1-9][0-9]*$'\n' ]] || fail "Hello's name: $out"
	[[ $out =~ id\ [0-9a-f]{32} ]] || fail "GetId: $out"

	# sd-bus and GLib clients in bus mode (Hello first), the same answers.
	dbus=(org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus)
	assert_eq 's ":p2p.0"' "$(busctl --address=$LISTEN call "${dbus[@]}" GetNameOwner s org.bgrun.Runtime1)" \
		"busctl GetNameOwner"
	assert_eq "b false" "$(busctl --address=$LISTEN call "${dbus[@]}" NameHasOwner s org.example.None)" \
		"busctl NameHasOwner of another name"
	[[ $(busctl --address=$LISTEN call "${dbus[@]}" GetId) =~ ^s\ \"[0-9a-f]{32}\"$ ]] || fail "busctl GetId"
	expect_fail busctl --address=$LISTEN call "${dbus[@]}" GetNameOwner s org.example.None
	assert_contains "$ERR_OUT" "org.example.None" "GetNameOwner of a name nobody owns"
	expect_fail busctl --address=$LISTEN call "${dbus[@]}" ListNames
	assert_contains "$ERR_OUT" "ListNames" "an unknown bus daemon method named"
	assert_contains "$ERR_OUT" "GetNameOwner" "the methods that are answered"
	busctl --address=$LISTEN call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.freedesktop.DBus.Peer Ping ||
		fail "busctl Ping"
	out=$(gdbus call --address "$LISTEN" --dest org.bgrun.Runtime1 --object-path /org/bgrun/Runtime1 \
		--method org.bgrun.Runtime1.Manager.Get "$id" 2>&1) || fail "gdbus call Get: $out"
	assert_contains "$out" "'true'" "gdbus call Get"
	out=$(gdbus call --address "$LISTEN" --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
		--method org.freedesktop.DBus.GetNameOwner org.bgrun.Runtime1 2>&1) || fail "gdbus GetNameOwner: $out"
	assert_eq "(':p2p.0',)" "$out" "gdbus GetNameOwner"

	journalctl --sync
	out=$(journalctl -q -u bgrund-listen.service -p warning --since "$since" --no-pager)
	assert_eq "" "$out" "bgrund's warnings and errors meanwhile"
}

# AddMatch is answered, and what a client can make bgrund hold by it is
# capped per connection, as a bus daemon caps it.
test_listen_match_rules_per_connection_are_limited() {
	listen_start
	out=$(/usr/bin/python3 "$CLIENTS_DIR/listen-bus-daemon.py" "$LISTEN" matches 256 2>&1) || fail "client failed: $out"
	assert_contains "$out" "added 256" "match rules held"
	assert_contains "$out" "then org.freedesktop.DBus.Error.LimitsExceeded" "the 257th"
	assert_contains "$out" "remove-unknown org.freedesktop.DBus.Error.MatchRuleNotFound" "RemoveMatch of no rule"
	assert_contains "$out" "again ok" "AddMatch once one was removed"
	systemctl is-active -q bgrund-listen.service || fail "bgrund died"
}
