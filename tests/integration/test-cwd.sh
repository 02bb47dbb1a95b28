# SPDX-License-Identifier: MIT
# A job's cwd is checked by the job's own process, as its user, never in
# bgrund's one loop (issue: a user's FUSE mount that never answers held
# every caller of bgrund). A cwd the user cannot enter still answers
# InvalidArgs naming it and leaves no record, no unit, no process.

# ucall USER METHOD GVARIANT-ARGS...: gdbus call on the Manager as USER
# (gdbus errors carry the D-Bus error name).
ucall() {
	local user=$1 method=$2
	shift 2
	as_user "$user" gdbus call --system --dest org.bgrun.Runtime1 --object-path /org/bgrun/Runtime1 \
		--method "org.bgrun.Runtime1.Manager.$method" "$@"
}

# The ids of USER's jobs, through the CLI as that user.
job_count() { as_user "$1" "$BGRUN" list --json | jq length; }
store_count() { ls /var/lib/bgrun/jobs | wc -l; }
scopes_of() { # UID: the job scopes in that owner's slice now
	local d=$CG$(owner_slice_cgroup "$1")
	[[ -d $d ]] || return 0
	find "$d" -maxdepth 1 -name 'bgrun-job-*.scope' -printf '%f\n'
}
no_scopes_of() { [[ -z $(scopes_of "$1") ]]; }
procs_of() { ps -u "$1" -o pid=,comm= 2>/dev/null; }
no_procs_of() { [[ -z $(procs_of "$1") ]]; }

# A refusal: InvalidArgs, naming cwd and the user, and nothing left of it.
assert_refused_and_gone() { # USER UID OUTPUT CWD JOBS-BEFORE STORE-BEFORE
	local user=$1 uid=$2 out=$3 cwd=$4
	assert_contains "$out" org.freedesktop.DBus.Error.InvalidArgs "error name"
	assert_contains "$out" "cwd '$cwd' does not exist or is not a directory that user $user can enter" "error message"
	assert_eq "$5" "$(job_count "$user")" "$user's jobs in ListJobs after the refusal"
	assert_eq "$6" "$(store_count)" "job directories after the refusal"
	wait_until 5 no_scopes_of "$uid" || fail "job scopes of $user left: $(scopes_of "$uid")"
	wait_until 5 no_procs_of "$user" || fail "processes of $user left: $(procs_of "$user")"
}

# make_closed_dir: CLOSED_DIR, a directory of root's that no other user may
# enter (never /root: the clone, and the bgrun on the users' PATH, may live
# there).
make_closed_dir() {
	CLOSED_DIR=$(mktemp -d /tmp/bgrun-cwd-closed.XXXXXX)
	chmod 700 "$CLOSED_DIR"
	on_exit "rmdir '$CLOSED_DIR'"
}

test_a_cwd_the_user_cannot_enter_leaves_nothing() {
	setup_users
	local uid jobs store closed
	uid=$(id -u alice)
	make_closed_dir
	closed=$CLOSED_DIR
	jobs=$(job_count alice) store=$(store_count)
	expect_fail ucall alice Launch "'touch /tmp/bgrun-cwd-ran'" "''" "'$closed'" "{}"
	assert_refused_and_gone alice "$uid" "$ERR_OUT" "$closed" "$jobs" "$store"
	[[ ! -e /tmp/bgrun-cwd-ran ]] || fail "the command ran"
	# A Launch that waits meanwhile for nothing else still works, and the
	# same user's next job runs.
	out=$(as_user alice "$BGRUN" run --wait -C /tmp -- 'echo ok') || fail "alice's next job: $out"
	assert_eq ok "$out" "alice's next job's output"
}

# A FUSE file system whose server never answers: /dev/fuse mounted on DIR
# (allow_other) and never read, so every lookup below DIR waits, killably,
# until the server ends (then: ENOTCONN). What a user with fusermount can
# mount; only python3 and the kernel's FUSE are needed.
FUSE_HANG='
import ctypes, os, signal, sys
fd = os.open("/dev/fuse", os.O_RDWR)
libc = ctypes.CDLL(None, use_errno=True)
opts = "fd=%d,rootmode=40755,user_id=0,group_id=0,allow_other" % fd
if libc.mount(b"bgrun-test-hang", sys.argv[1].encode(), b"fuse", 0, opts.encode()) != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
print("mounted", flush=True)
signal.pause()
'

# Row 6 of the issue: while one Launch's cwd lookup hangs, bgrund answers
# everyone else at once, and that Launch still ends as a refusal.
test_a_hanging_cwd_lookup_holds_up_no_one() {
	setup_users
	[[ -c /dev/fuse ]] || skip "no /dev/fuse in the sandbox: a FUSE mount that hangs cannot be made"
	command -v python3 >/dev/null || fail "python3 is missing: tools/install-deps installs it"
	local tmp mnt fuse launch uid jobs store pid i ok=0 t0 ms
	uid=$(id -u alice)
	tmp=$(mktemp -d /tmp/bgrun-cwd.XXXXXX)
	chmod 755 "$tmp"
	mnt=$tmp/mnt
	mkdir "$mnt"
	on_exit "rm -rf '$tmp'"
	on_exit "umount -l '$mnt' 2>/dev/null"
	python3 -c "$FUSE_HANG" "$mnt" >"$tmp/fuse.out" 2>&1 &
	fuse=$!
	on_exit "kill $fuse 2>/dev/null; wait $fuse 2>/dev/null"
	wait_until 5 grep -q mounted "$tmp/fuse.out" ||
		skip "cannot mount FUSE in the sandbox: $(cat "$tmp/fuse.out")"
	# The mount hangs as it should (a lookup as root, outside bgrund).
	timeout 0.5 stat "$mnt/sub" >/dev/null 2>&1 && fail "a lookup on the hanging mount answered"

	jobs=$(job_count alice) store=$(store_count)
	pid=$(bgrund_pid)
	ucall alice Launch "'touch /tmp/bgrun-cwd-ran'" "''" "'$mnt/sub'" "{}" >"$tmp/launch.out" 2>&1 &
	launch=$!
	on_exit "kill $launch 2>/dev/null"
	# alice's Launch is under way once her job's first process runs as her
	# (the supervisor's child, not yet the command, looking cwd up); give it
	# a moment more to be stuck. (Checked below: where bgrund itself looks
	# cwd up, none comes.)
	wait_until 5 bash -c "ps -u alice -o comm= | grep -q '^bgrun-super'"
	sleep 0.3
	kill -0 "$launch" 2>/dev/null || fail "alice's Launch answered while its cwd lookup hangs: $(cat "$tmp/launch.out")"

	# bob's Ping to bgrund: the bus round trip only (busctl's own timeout),
	# no process start in it; 3 of 5 within 100 ms on a busy machine.
	for i in 1 2 3 4 5; do
		as_user bob busctl --timeout=0.1 call org.bgrun.Runtime1 /org/bgrun/Runtime1 \
			org.freedesktop.DBus.Peer Ping >/dev/null 2>&1 && ok=$((ok + 1))
	done
	((ok >= 3)) || fail "bgrund answered $ok of 5 Pings within 100 ms while alice's cwd lookup hangs"
	ps -u alice -o comm= | grep -q '^bgrun-super' ||
		fail "no process of alice's job is looking its cwd up: $(cat "$tmp/launch.out")"
	# And bob's own job starts, runs and ends meanwhile.
	t0=$(date +%s%N)
	out=$(as_user bob "$BGRUN" run --wait -C /tmp -- 'echo hello') || fail "bob's job: $out"
	ms=$((($(date +%s%N) - t0) / 1000000))
	assert_eq hello "$out" "bob's job's output"
	assert_le "$ms" 5000 "ms for bob's whole run --wait"
	kill -0 "$launch" 2>/dev/null || fail "alice's Launch answered before the FUSE server ended: $(cat "$tmp/launch.out")"

	# The server goes: the lookup fails, and the Launch is refused as for
	# any cwd its user cannot enter.
	kill "$fuse"
	wait "$fuse" 2>/dev/null
	wait_until 10 bash -c "! kill -0 $launch 2>/dev/null" || fail "alice's Launch did not answer once the lookup failed"
	wait "$launch" && fail "alice's Launch succeeded: $(cat "$tmp/launch.out")"
	# The store holds bob's job more, and nothing of alice's.
	assert_refused_and_gone alice "$uid" "$(cat "$tmp/launch.out")" "$mnt/sub" "$jobs" "$((store + 1))"
	[[ ! -e /tmp/bgrun-cwd-ran ]] || fail "the command ran"
	assert_eq "$pid" "$(bgrund_pid)" "bgrund pid"
}

# bgrund --user is the job's user already: its answer is the same.
test_the_user_instance_refuses_the_same_way() {
	command -v bgrun-sandbox-login >/dev/null || fail "bgrun-sandbox-login is missing: tools/sandbox puts it on PATH"
	setup_users
	local out closed
	make_closed_dir
	closed=$CLOSED_DIR
	out=$(bgrun-sandbox-login alice -- bash -c '
		records() { ls ~/.local/state/bgrun/jobs 2>/dev/null | wc -l; }
		jobs() { bgrun --user list --json | jq length; }
		bgrun --user list >/dev/null # started, so that its own state counts below
		r=$(records) j=$(jobs)
		bgrun --user run -C '"$closed"' -- "touch /tmp/bgrun-cwd-ran" 2>&1 && echo "LAUNCHED"
		echo "records: $r -> $(records); jobs: $j -> $(jobs)"
	' 2>&1)
	assert_not_contains "$out" LAUNCHED "bgrun --user run in $closed"
	assert_contains "$out" "cwd '$closed' does not exist or is not a directory that user alice can enter" "the --user instance's error"
	[[ $out =~ records:\ ([0-9]+)\ -\>\ ([0-9]+)\;\ jobs:\ ([0-9]+)\ -\>\ ([0-9]+) ]] || fail "no counts in: $out"
	assert_eq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "alice's --user job directories after the refusal"
	assert_eq "${BASH_REMATCH[3]}" "${BASH_REMATCH[4]}" "alice's --user jobs after the refusal"
	[[ ! -e /tmp/bgrun-cwd-ran ]] || fail "the command ran"
}
