# SPDX-License-Identifier: MIT
# A job's sandbox (issue #33): what a job may reach, with systemd.exec(5)'s
# names, enforced by the kernel or refused. So far: PrivateNetwork, PrivateTmp.

# A TCP listener on the host's loopback, on an ephemeral port: its port.
# Stopped when the test ends.
LISTENER_PID=
listen_on_loopback() {
	/usr/bin/python3 -c '
import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
time.sleep(3600)' >listener.port &
	LISTENER_PID=$!
	on_exit "kill $LISTENER_PID 2>/dev/null"
	wait_until 10 test -s listener.port || fail "the listener did not start"
	cat listener.port
}

# reach PORT: a job's command that says whether 127.0.0.1:PORT answers.
reach() {
	echo "python3 -c 'import socket
try:
    socket.create_connection((\"127.0.0.1\", $1), timeout=2); print(\"reached\")
except OSError:
    print(\"unreachable\")'"
}

# The job's view through PrivateNetwork, as USER (root: ""): its
# interfaces, whether the host's listener on PORT answers, and whether its
# own loopback works.
private_network_as() {
	local user=$1 port=$2 script
	script="tail -n +3 /proc/self/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' '; $(reach "$port");
		python3 -c 'import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(); socket.create_connection(s.getsockname()); print(\"own loopback up\")'"
	if [[ -z $user ]]; then
		bgrun run --wait -q -p PrivateNetwork=yes -- "$script"
	else
		as_user "$user" "$BGRUN" run --wait -q -C "/home/$user" -p PrivateNetwork=yes -- "$script"
	fi
}

test_private_network_sees_only_its_own_loopback() {
	local port out id
	port=$(listen_on_loopback)
	# Without it the listener is reached: the check below can tell.
	assert_eq reached "$(bgrun run --wait -q -- "$(reach "$port")")" "the host's listener without PrivateNetwork"
	out=$(private_network_as "" "$port") || fail "root's job: $out"
	assert_eq $'lo unreachable\nown loopback up' "$out" "root's job with PrivateNetwork"
	setup_users
	out=$(private_network_as alice "$port") || fail "alice's job: $out"
	assert_eq $'lo unreachable\nown loopback up' "$out" "alice's job with PrivateNetwork"
	# The record says what was applied, and how; a job without it, nothing.
	id=$(bgrun run -q -p PrivateNetwork=yes -- true) || fail "run"
	assert_eq '{"PrivateNetwork":true,"mechanisms":["network-namespace"]}' "$(jget "$id" '.sandbox' | jq -c .)" "the record's sandbox"
	assert_contains "$(bgrun status "$id")" "Sandbox: PrivateNetwork=yes (network-namespace)"
	id=$(bgrun run -q -- true) || fail "run"
	assert_eq '{}' "$(jget "$id" '.sandbox' | jq -c .)" "the sandbox of a job without one"
	# As a Launch option over the bus, and a bad value on the command line.
	out=$(busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager Launch 'sssa{sv}' \
		'tail -n +3 /proc/self/net/dev | wc -l' sandbox / 1 PrivateNetwork b true) || fail "Launch: $out"
	id=$(sed -n 's/^so "\([^"]*\)".*/\1/p' <<<"$out")
	bgrun wait "$id" >/dev/null
	assert_eq 1 "$(bgrun logs "$id")" "interfaces of a job launched over the bus with PrivateNetwork"
	bgrun run -p PrivateNetwork=maybe -- true 2>err && fail "PrivateNetwork=maybe was taken"
	assert_contains "$(cat err)" "Invalid PrivateNetwork 'maybe' (yes or no)"
}

# RequestId compares sandboxes: the same command in another sandbox under
# one id is refused, naming the job.
test_request_id_compares_the_sandbox() {
	local a out
	a=$(bgrun run -q --request-id "sandbox-$$" -p PrivateNetwork=yes -- true) || fail "run"
	out=$(bgrun run -q --request-id "sandbox-$$" -- true 2>&1) && fail "another sandbox under the id ran: $out"
	assert_contains "$out" "launched job $a with another sandbox"
	assert_eq "$a" "$(bgrun run -q --request-id "sandbox-$$" -p PrivateNetwork=yes -- true)" "the same sandbox"
}

# Where no network namespace may be made (a user's own bgrund, which has no
# privilege to make one), PrivateNetwork is refused: nothing runs, no record.
test_private_network_is_refused_where_it_cannot_be_enforced() {
	ensure_user alice
	local out
	out=$(bgrun-sandbox-login alice -- bash -c '
		n=$(bgrun --user list --json | jq length)
		bgrun --user run --wait -p PrivateNetwork=yes -- "touch \$HOME/ran" 2>&1; echo "rc=$?"
		echo "records $n $(bgrun --user list --json | jq length)"
		[ -e "$HOME/ran" ] && echo "it ran"' 2>&1)
	assert_contains "$out" "Sandbox not available, nothing was run: PrivateNetwork cannot be enforced here"
	assert_contains "$out" "rc=244" "exits as containment refused"
	grep -q "^records \([0-9]*\) \1$" <<<"$out" || fail "a record was left: $out"
	assert_not_contains "$out" "it ran"
}

# PrivateTmp: a /tmp, /var/tmp and /dev/shm of the job's own, empty, that
# the host never sees and the next job does not get.
test_private_tmp_is_the_jobs_own_and_goes_with_it() {
	local mark=bgrun-test-private-tmp-$$ out id
	# shellcheck disable=SC2016
	local script='for d in /tmp /var/tmp /dev/shm; do
		[ -z "$(ls -A $d)" ] || echo "$d had $(ls -A $d | head -3)"; echo x > $d/'"$mark"'; done
		echo ok'
	touch "/tmp/$mark.host"
	out=$(bgrun run --wait -q -C / -p PrivateTmp=yes -- "$script") || fail "root's job: $out"
	assert_eq ok "$out" "root's job: empty /tmp, /var/tmp, /dev/shm of its own"
	for d in /tmp /var/tmp /dev/shm; do
		[[ ! -e $d/$mark ]] || fail "the job's $d/$mark reached the host"
	done
	setup_users
	out=$(as_user alice "$BGRUN" run --wait -q -C /home/alice -p PrivateTmp=yes -- "$script") || fail "alice's job: $out"
	assert_eq ok "$out" "alice's job"
	# Two jobs at once do not share theirs; the host's mounts are untouched.
	id=$(bgrun run -q -C / -p PrivateTmp=yes -- "echo a > /tmp/$mark; sleep 300") || fail "run"
	wait_until_eq 10 running job_status "$id" || fail "not running"
	out=$(bgrun run --wait -q -C / -p PrivateTmp=yes -- "cat /tmp/$mark 2>/dev/null || echo none") || fail "run"
	assert_eq none "$out" "a second job's /tmp"
	bgrun kill "$id" >/dev/null
	[[ -e /tmp/$mark.host ]] || fail "the host's /tmp changed"
	rm -f "/tmp/$mark.host"
	assert_eq '{"PrivateTmp":true,"mechanisms":["mount-namespace"]}' "$(jget "$id" '.sandbox' | jq -c .)" "the record's sandbox"
	id=$(bgrun run -q -C / -p PrivateTmp=yes -p PrivateNetwork=yes -- true) || fail "run"
	assert_eq '{"PrivateNetwork":true,"PrivateTmp":true,"mechanisms":["network-namespace","mount-namespace"]}' \
		"$(jget "$id" '.sandbox' | jq -c .)" "both"
}
