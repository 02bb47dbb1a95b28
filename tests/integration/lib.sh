# SPDX-License-Identifier: MIT
# Helpers for the integration tests. Sourced by run.sh; each test file defines
# functions named test_* and run.sh calls each in a subshell inside the
# sandbox (a private systemd with a real system bus and bgrund running).

MGR=(org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager)
# This directory, and the D-Bus clients the tests drive bgrund with
# (subscribe.py, cost.py, …), apart from the tests in clients/.
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLIENTS_DIR=$TESTS_DIR/clients

# A failed assertion prints where and why, and ends the test (it runs in a
# subshell with errexit off, so `exit 1` fails just this test).
fail() {
	echo "    FAIL: $*" >&2
	echo "    at: ${BASH_SOURCE[2]##*/}:${BASH_LINENO[1]} (${FUNCNAME[2]})" >&2
	exit 1
}

skip() {
	echo "    SKIP: $*" >&2
	exit 77
}

assert_eq() { # expected actual [what]
	[[ "$1" == "$2" ]] || fail "${3:-value}: expected '$1', got '$2'"
}

assert_ne() {
	[[ "$1" != "$2" ]] || fail "${3:-value}: expected anything but '$1'"
}

assert_contains() { # haystack needle [what]
	[[ "$1" == *"$2"* ]] || fail "${3:-text}: '$2' not found in: ${1:0:400}"
}

assert_not_contains() {
	[[ "$1" != *"$2"* ]] || fail "${3:-text}: unexpected '$2' in: ${1:0:400}"
}

assert_le() { # a b [what]: a <= b
	(($1 <= $2)) || fail "${3:-value}: $1 is not <= $2"
}

# gcall METHOD GVARIANT-ARGS...: call the Manager with gdbus, whose errors
# carry the D-Bus error name (busctl prints only the message).
gcall() {
	local method=$1
	shift
	gdbus call --system --dest org.bgrun.Runtime1 --object-path /org/bgrun/Runtime1 \
		--method "org.bgrun.Runtime1.Manager.$method" "$@"
}

# Run a command that must fail; its stderr+stdout go to $ERR_OUT.
expect_fail() {
	if ERR_OUT=$("$@" 2>&1); then
		fail "expected failure from: $*; got success: ${ERR_OUT:0:300}"
	fi
	return 0
}

# wait_until TIMEOUT_SEC COMMAND...: poll (50 ms) until COMMAND succeeds.
wait_until() {
	local timeout=$1 i
	shift
	for ((i = 0; i < timeout * 20; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}

# stop_bgrund [COMMAND]: SIGSTOP bgrund (its pid in BGRUND); it is continued
# whatever the test does, and COMMAND then runs, when the test ends.
stop_bgrund() {
	BGRUND=$(bgrund_pid)
	[[ $BGRUND -gt 0 ]] || fail "no bgrund"
	trap 'kill -CONT "$BGRUND" 2>/dev/null; '"${1:-:}" EXIT
	kill -STOP "$BGRUND"
}

# wait_until_eq SECONDS EXPECTED COMMAND...: until COMMAND's output is
# EXPECTED, asked anew each time (wait_until test "$(...)" = X would test
# the one value the shell expanded before waiting).
wait_until_eq() {
	local timeout=$1 expected=$2 i
	shift 2
	for ((i = 0; i < timeout * 20; i++)); do
		[[ $("$@" 2>/dev/null) == "$expected" ]] && return 0
		sleep 0.05
	done
	return 1
}

# jget ID FILTER: a field of the job's record through the CLI's --json.
jget() {
	bgrun status "$1" --json | jq -r "$2"
}

job_status() { jget "$1" .status; }

pid_alive() { # a pid that is alive and not a zombie
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $st && $st != Z ]]
}

bgrund_pid() {
	systemctl show -P MainPID bgrund.service
}

# The v2 cgroup root as the sandbox sees it.
CG=/sys/fs/cgroup
# The slice an owner's jobs run in, and its cgroup; root's for the tests
# that launch as root.
owner_slice() { echo "user-$1-bgrun.slice"; }
owner_slice_cgroup() { echo "/user.slice/user-$1.slice/user-$1-bgrun.slice"; }
ROOT_SLICE=$(owner_slice 0)
ROOT_SLICE_CG=$(owner_slice_cgroup 0)

# Create a user inside the sandbox (its /etc is a private overlay).
ensure_user() {
	id "$1" >/dev/null 2>&1 || useradd -m -s /bin/bash "$1"
}

as_user() { # USER COMMAND...: run with the user's uid, gids and a clean env
	local user=$1
	shift
	setpriv --reuid="$user" --regid="$user" --init-groups --reset-env -- "$@"
}

# with_config KEY=VALUE...: run bgrund with a [Runtime] drop-in for the rest
# of the test; the drop-in goes, and bgrund restarts, when the test ends.
with_config() {
	mkdir -p /etc/bgrun/bgrund.conf.d
	printf '%s\n' "[Runtime]" "$@" >/etc/bgrun/bgrund.conf.d/90-test.conf
	trap 'rm -f /etc/bgrun/bgrund.conf.d/90-test.conf; systemctl reset-failed bgrund.service; systemctl restart bgrund.service' EXIT
	# Tests restart bgrund often; keep systemd's start limit out of it.
	systemctl reset-failed bgrund.service
	systemctl restart bgrund.service || fail "bgrund did not restart with: $*"
}

# The watches bgrund's inotify instance holds now (WaitOutput's).
inotify_watches() {
	local pid fd n=0
	pid=$(bgrund_pid)
	for fd in /proc/"$pid"/fd/*; do
		[[ $(readlink "$fd") == anon_inode:inotify ]] || continue
		n=$((n + $(grep -c '^inotify wd:' "/proc/$pid/fdinfo/${fd##*/}")))
	done
	echo "$n"
}

grant_of() { cat "/var/lib/bgrun/jobs/$1/grant.json"; }

# The pids in cgroup DIR and every cgroup below it (none if it is gone).
all_procs_below() { [[ ! -d $1 ]] || find "$1" -name cgroup.procs -exec cat {} +; }

# The pid of a running job's supervisor, from the record it wrote.
supervisor_pid() { jq -r .supervisor_pid "/var/lib/bgrun/jobs/$1/run.json"; }

open_grants() { grep -l '"state":"open"' /var/lib/bgrun/jobs/*/grant.json 2>/dev/null | wc -l; }

# setup_users: alice and bob, two ordinary users of the sandbox; BGRUN (the
# staged bgrun's path, for as_user), ALICE and BOB (their uids).
setup_users() {
	ensure_user alice
	ensure_user bob
	BGRUN=$(command -v bgrun)
	ALICE=$(id -u alice)
	BOB=$(id -u bob)
}

# on_exit COMMAND: run COMMAND when the test ends, last registered first.
UNDO=()
on_exit() {
	UNDO=("$1" "${UNDO[@]}")
	trap 'for _c in "${UNDO[@]}"; do eval "$_c"; done' EXIT
}

# ping_start ADDRESS PID: bob sends bgrund (PID) a Ping every 10 ms from now
# on, at ADDRESS ("system" or a bus address), until ping_stop; its lines go
# to a file of its own.
ping_start() {
	PING_OUT=$(mktemp /tmp/bgrun-ping.XXXXXX) || fail "no file for bob's pinger"
	chmod 644 "$PING_OUT"
	on_exit "rm -f $PING_OUT"
	# setpriv execs the pinger: $! is its pid.
	setpriv --reuid=bob --regid=bob --init-groups --reset-env -- /usr/bin/python3 "$CLIENTS_DIR/cost.py" ping "$1" "$2" \
		>"$PING_OUT" 2>&1 &
	PING_PID=$!
	on_exit "kill $PING_PID 2>/dev/null"
	wait_until 10 grep -q pinging "$PING_OUT" || fail "bob's pinger did not start: $(cat "$PING_OUT")"
}

# ping_stop: sets PING (its summary, a JSON line), PING_WORST (ms) and
# PING_CPU_WORST (ns of bgrund's CPU while one Ping waited).
ping_stop() {
	local rc=0
	kill -TERM "$PING_PID"
	wait "$PING_PID" || rc=$?
	PING=$(tail -1 "$PING_OUT")
	[[ $PING == "{"* ]] || fail "bob's pinger ended (status $rc) without its summary: $(ls -l "$PING_OUT"; cat "$PING_OUT")"
	PING_WORST=$(jq -r '.worst_ms | floor' <<<"$PING") || fail "bob's pinger said: $(cat "$PING_OUT")"
	PING_CPU_WORST=$(jq -r '.worst_cpu_ms * 1000000 | floor' <<<"$PING")
	[[ $(jq -r '.errors | length' <<<"$PING") == 0 ]] || fail "bob's Pings failed: $PING"
	(($(jq -r .pings <<<"$PING") > 0)) || fail "bob's pinger sent nothing: $PING"
}
