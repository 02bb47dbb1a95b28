# SPDX-License-Identifier: MIT
# How bgrun reaches bgrund (issues #11, #13): --address / BGRUN_ADDRESS, -H
# through sd-bus's SSH transport, and the fallback to bgrund --listen's
# socket where there is no bus.

SYSTEM_BUS=unix:path=/run/dbus/system_bus_socket

# A stand-in ssh first on PATH: it logs how it was called and bridges to the
# local system bus, as ssh HOST systemd-stdio-bridge would on HOST. The test
# proves the transport and the flag, not SSH.
stand_in_ssh() {
	local bridge
	bridge=$(command -v systemd-stdio-bridge || ls /lib/systemd/systemd-stdio-bridge /usr/lib/systemd/systemd-stdio-bridge 2>/dev/null | head -1)
	[[ -x $bridge ]] || fail "systemd-stdio-bridge is missing: it comes with systemd, which tools/install-deps installs"
	mkdir -p fakessh
	cat >fakessh/ssh <<-EOF
		#!/bin/sh
		echo "\$*" >>"$PWD/ssh.log"
		exec $bridge
	EOF
	chmod +x fakessh/ssh
}

test_address_of_the_system_bus_works() {
	out=$(bgrun --address "$SYSTEM_BUS" run --wait -- 'echo through-address') || fail "run --wait through --address: $out"
	assert_eq through-address "$out" "the job's output"
	id=$(bgrun --address="$SYSTEM_BUS" run -q -- 'true') || fail "run through --address="
	assert_eq exited "$(bgrun --address "$SYSTEM_BUS" wait "$id" --json | jq -r .status)" "wait through --address"
	bgrun forget "$id" || fail "forget"
}

test_bgrun_address_variable_and_its_older_name() {
	out=$(BGRUN_ADDRESS=$SYSTEM_BUS bgrun run --wait -- 'echo via-env') || fail "run with BGRUN_ADDRESS: $out"
	assert_eq via-env "$out"
	out=$(BGRUN_BUS_ADDRESS=$SYSTEM_BUS bgrun list) || fail "list with BGRUN_BUS_ADDRESS: $out"
	# The variable names where to go; nothing listening there is an error, not the system bus.
	expect_fail env BGRUN_ADDRESS=unix:path=/nonexistent/socket bgrun list
	assert_contains "$ERR_OUT" "/nonexistent/socket" "the error names the address"
	# --system on the command line wins over the variable.
	BGRUN_ADDRESS=unix:path=/nonexistent/socket bgrun --system list >/dev/null || fail "--system over BGRUN_ADDRESS"
}

test_address_where_nothing_listens_is_one_line() {
	expect_fail bgrun --address unix:path=/run/nothing-here list
	assert_eq 1 "$(wc -l <<<"$ERR_OUT")" "lines of the error"
	assert_contains "$ERR_OUT" "unix:path=/run/nothing-here"
}

test_no_bus_falls_back_to_the_listen_socket() {
	# No system bus to reach: the CLI tries bgrund --listen's default socket.
	# Nothing serves it in the private systemd: a bgrund --listen that does
	# was left behind by another test.
	! bgrun --address unix:path=/run/bgrun/bus list >/dev/null 2>&1 ||
		fail "something serves /run/bgrun/bus: a bgrund --listen left running ($(systemctl list-units --no-legend 'bgrund*' 2>&1))"
	expect_fail env DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/no-bus-here bgrun list
	assert_contains "$ERR_OUT" "/run/bgrun/bus" "the error names the listen socket"
	assert_eq 1 "$(wc -l <<<"$ERR_OUT")" "lines of the error"
	# And for --user, the user's runtime directory.
	expect_fail env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR=/run/user/4242 bgrun --user list
	assert_contains "$ERR_OUT" "/run/user/4242/bgrun/bus"
}

test_remote_host_through_the_ssh_transport() {
	stand_in_ssh
	out=$(PATH=$PWD/fakessh:$PATH bgrun -H builder@farhost run --wait -- 'echo remote-hello') ||
		fail "run through -H: $out"
	assert_eq remote-hello "$out" "the job's output through -H"
	assert_contains "$(cat ssh.log)" "builder@farhost" "ssh got the host"
	assert_contains "$(cat ssh.log)" "systemd-stdio-bridge" "ssh ran the bridge on the host"
	# The other verbs go the same way.
	id=$(PATH=$PWD/fakessh:$PATH bgrun -H farhost run -q -- 'sleep 300') || fail "run -q through -H"
	trap 'bgrun kill "$id" >/dev/null 2>&1' EXIT
	PATH=$PWD/fakessh:$PATH bgrun -H farhost list | grep -q "$id" || fail "list through -H misses $id"
	PATH=$PWD/fakessh:$PATH bgrun -H farhost kill "$id" >/dev/null || fail "kill through -H"
	assert_eq killed "$(job_status "$id")"
}

test_remote_host_gets_none_of_the_local_environment() {
	stand_in_ssh
	out=$(FOO_LOCAL=here PATH=$PWD/fakessh:$PATH bgrun -H farhost run -E SET_BY_E=yes --wait -- \
		'echo "foo=${FOO_LOCAL:-unset} e=$SET_BY_E pwd=$(pwd)"') || fail "run through -H: $out"
	assert_eq "foo=unset e=yes pwd=/" "$out" "only -E goes to another host, and the directory is /"
}

test_host_and_address_do_not_combine() {
	expect_fail bgrun -H somehost --address "$SYSTEM_BUS" list
	assert_contains "$ERR_OUT" "cannot be combined"
	set +e
	bgrun -H somehost --user list 2>/dev/null
	assert_eq 2 "$?" "exit status of a usage error"
}

test_address_of_a_peer_to_peer_bgrund() {
	bgrund=$(systemctl show -P ExecStart bgrund.service | sed -n 's/.*path=\([^ ;]*\).*/\1/p')
	[[ -x $bgrund ]] || fail "no bgrund found from bgrund.service: $bgrund"
	# A second bgrund of its own, with no bus (so peer to peer only), its own
	# state, and nothing to contain its jobs with but process groups.
	mkdir -p state
	DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/no-bus-here "$bgrund" --listen="unix:path=$PWD/p2p.sock" \
		--state-dir="$PWD/state" --containment-mode=report-only 2>bgrund.log &
	pid=$!
	trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
	wait_until 10 test -S p2p.sock || fail "bgrund --listen did not listen: $(cat bgrund.log)"
	# A bus would want Hello first; bgrund itself turns it down, and the CLI
	# goes on without.
	out=$(bgrun --address "unix:path=$PWD/p2p.sock" run --wait -- 'echo peer-to-peer') || fail "run --wait over p2p: $out"
	assert_eq peer-to-peer "$out"
	out=$(BGRUN_ADDRESS="unix:path=$PWD/p2p.sock" bgrun list --json) || fail "list over p2p: $out"
	assert_eq 1 "$(jq length <<<"$out")" "the one job of that bgrund"
	# The system bgrund does not know it.
	id=$(jq -r '.[0].id' <<<"$out")
	expect_fail bgrun status "$id"
	BGRUN_ADDRESS="unix:path=$PWD/p2p.sock" bgrun forget "$id" || fail "forget over p2p"
}

test_remote_host_that_cannot_be_reached_is_one_line() {
	mkdir -p deadssh
	printf '#!/bin/sh\nexit 255\n' >deadssh/ssh
	chmod +x deadssh/ssh
	expect_fail env PATH=$PWD/deadssh:$PATH bgrun -H unreachable list
	assert_eq 1 "$(wc -l <<<"$ERR_OUT")" "lines of the error: $ERR_OUT"
	assert_contains "$ERR_OUT" "unreachable" "the error names the host"
	assert_contains "$ERR_OUT" "ssh"
}
