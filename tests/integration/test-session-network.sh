# SPDX-License-Identifier: MIT
# A session's network (issue #50): PrivateNetwork=yes jobs of one owner and
# one session share one network namespace while any of them runs, so that
# a server one starts on 127.0.0.1 answers the next; no other session, no
# other owner, no job without PrivateNetwork and not the host reaches it.

PORT=18767

# A server's command: on 127.0.0.1:PORT, "hello" to each connection. With
# lo-up, it brings its loopback up first (in a network namespace it made).
server() {
	local up=
	[[ ${1:-} == lo-up ]] && up='import fcntl, struct
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
flags = struct.unpack("16sH", fcntl.ioctl(u, 0x8913, struct.pack("16sH", b"lo", 0)))[1]
fcntl.ioctl(u, 0x8914, struct.pack("16sH", b"lo", flags | 1))'
	echo "python3 -c 'import socket
$up
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"127.0.0.1\", $PORT))
s.listen()
print(\"listening\", flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b\"hello\\n\")
    c.close()'"
}

# A client's command: what 127.0.0.1:PORT answers, or "unreachable".
client() {
	echo "python3 -c 'import socket
try:
    print(socket.create_connection((\"127.0.0.1\", $PORT), timeout=3).recv(64).decode().strip())
except OSError:
    print(\"unreachable\")'"
}

# serve [RUN-OPTIONS]: a server job (PrivateNetwork=yes), once it listens;
# its id in SERVER. Killed when the test ends (so not in a subshell).
serve() {
	SERVER=$(bgrun run -q -C / -p PrivateNetwork=yes "$@" -- "$(server)") || fail "the server did not launch"
	on_exit "bgrun kill $SERVER >/dev/null 2>&1"
	wait_until 10 bash -c "bgrun logs $SERVER | grep -q listening" ||
		fail "the server did not listen: $(bgrun logs "$SERVER"; bgrun status "$SERVER")"
}

# fetch [RUN-OPTIONS]: what a job (the options given) gets from the port.
fetch() {
	bgrun run --wait -q -C / "$@" -- "$(client)"
}

from_the_host() { eval "$(client)"; }

test_a_sessions_jobs_reach_each_others_loopback() {
	# Nothing answers on the host: the checks below can tell.
	assert_eq unreachable "$(from_the_host)" "the port on the host, before"
	serve -s web
	assert_eq hello "$(fetch -s web -p PrivateNetwork=yes)" "a job of the same session"
	assert_eq hello "$(fetch -s web -p PrivateNetwork=yes -p PrivateTmp=yes)" \
		"a job of the session with another file-system sandbox (the network only is shared)"
	assert_eq unreachable "$(fetch -s other -p PrivateNetwork=yes)" "a job of another session"
	assert_eq unreachable "$(fetch -p PrivateNetwork=yes)" "a job of no session (its own network)"
	assert_eq unreachable "$(fetch -s web)" "a job of the session without PrivateNetwork (the host's network)"
	assert_eq unreachable "$(from_the_host)" "the host"
	# The record says whose network it is.
	assert_eq session "$(jget "$SERVER" .sandbox.network)" "the server's record"
	local own
	own=$(bgrun run -q -p PrivateNetwork=yes -- true) || fail "run"
	assert_eq own "$(jget "$own" .sandbox.network)" "a job of no session"
	assert_contains "$(bgrun status "$SERVER")" "network=session"
}

# While any of them runs: once the server's job ended, the next job of the
# session has a network of its own again.
test_the_network_goes_with_the_last_job_of_it() {
	serve -s web2
	assert_eq hello "$(fetch -s web2 -p PrivateNetwork=yes)" "while the server runs"
	bgrun kill "$SERVER" >/dev/null || fail "kill"
	assert_eq unreachable "$(fetch -s web2 -p PrivateNetwork=yes)" "after it ended"
}

test_another_owner_of_the_same_session_name_reaches_nothing() {
	setup_users
	serve -s shared
	local out
	out=$(as_user alice "$BGRUN" run --wait -q -C /home/alice -s shared -p PrivateNetwork=yes -- "$(client)") ||
		fail "alice's job: $out"
	assert_eq unreachable "$out" "alice's job in a session of the same name"
}

test_a_restarted_bgrund_finds_the_session_again() {
	serve -s kept
	systemctl restart bgrund.service || fail "restart bgrund"
	assert_eq hello "$(fetch -s kept -p PrivateNetwork=yes)" "a job of the session after bgrund's restart"
}

# An unprivileged bgrund's sandboxed jobs have user namespaces of their
# own: a session's share one, so that the next can join the network.
test_the_user_instance_shares_a_sessions_network() {
	ensure_user alice
	local out
	out=$(bgrun-sandbox-login alice -- bash -c "
		id=\$(bgrun --user run -q -C ~ -s web -p PrivateNetwork=yes -- \"$(server | sed 's/"/\\"/g')\")
		for i in \$(seq 100); do bgrun --user logs \$id | grep -q listening && break; sleep 0.1; done
		bgrun --user run --wait -q -C ~ -s web -p PrivateNetwork=yes -- \"$(client | sed 's/"/\\"/g')\"
		bgrun --user run --wait -q -C ~ -s other -p PrivateNetwork=yes -- \"$(client | sed 's/"/\\"/g')\"
		bgrun --user status --json \$id | jq -r .sandbox.network
		bgrun --user kill \$id >/dev/null" 2>&1)
	assert_eq $'hello\nunreachable\nsession' "$out" "alice's jobs in her --user instance"
}

# A member that moved itself into namespaces of its own making (a user
# namespace, and a network one it owns) is not joined: what a sibling
# joins is the session's, made by bgrun for its first job.
test_a_namespace_a_member_made_itself_is_not_joined() {
	setup_users
	local id out
	id=$(as_user alice "$BGRUN" run -q -C / -s moved -p PrivateNetwork=yes -- "exec unshare -rn $(server lo-up)") ||
		fail "the server did not launch"
	on_exit "bgrun kill $id >/dev/null 2>&1"
	wait_until 10 bash -c "bgrun logs $id | grep -q listening" ||
		fail "the server did not listen: $(bgrun logs "$id")"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -s moved -p PrivateNetwork=yes -- "$(client)") || fail "alice's job: $out"
	assert_eq unreachable "$out" "a job of the session"
}
