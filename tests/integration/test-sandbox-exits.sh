# SPDX-License-Identifier: MIT
# A sandbox with no way out (issue #34): a sandboxed job reaches no bus,
# no systemd and no bgrund, so it starts nothing outside its sandbox; it
# signals, ptraces and looks into no process outside it; the cgroup tree is
# read-only to it; and it knows it is sandboxed (BGRUN_SANDBOX).

# From inside a sandboxed job of alice's, with a login's environment (her
# user manager, session bus and bgrun --user there): bgrun run (the system
# instance), busctl --system, systemctl --user and bgrun --user start
# nothing, and bgrun says why.
test_a_sandboxed_job_starts_nothing_outside() {
	ensure_user alice
	local out
	# shellcheck disable=SC2016
	out=$(bgrun-sandbox-login alice -- bash -c '
		before="$(bgrun list --json | jq length) $(bgrun --user list --json | jq length)"
		# Without a sandbox, each of them works from a job: the test can tell.
		bgrun run --wait -q -- "busctl --system --no-pager list >/dev/null && echo system-bus; systemctl --user --no-pager list-units >/dev/null && echo user-systemd"
		# PrivateNetwork, not PrivateTmp: from a clone under /tmp, bgrun
		# itself is there.
		bgrun run --wait -q -p PrivateNetwork=yes -- "
			echo BGRUN_SANDBOX=\$BGRUN_SANDBOX
			bgrun run true 2>&1 | tail -1
			bgrun --user run true >/dev/null 2>&1 && echo bgrun --user ran
			busctl --system --no-pager list >/dev/null 2>&1 && echo busctl ran
			systemctl --user --no-pager list-units >/dev/null 2>&1 && echo systemctl ran
			echo done"
		after="$(bgrun list --json | jq length) $(bgrun --user list --json | jq length)"
		echo "jobs: $before -> $after"' 2>&1)
	assert_contains "$out" $'system-bus\nuser-systemd' "from an unsandboxed job"
	assert_contains "$out" "BGRUN_SANDBOX=custom"
	assert_contains "$out" "This is a sandboxed job (BGRUN_SANDBOX=custom): its sandbox keeps bgrund out of its reach"
	assert_not_contains "$out" "ran"
	assert_contains "$out" "done"
	# The sandboxed job itself is the one more in the system instance.
	[[ $out =~ jobs:\ ([0-9]+)\ ([0-9]+)\ -\>\ ([0-9]+)\ ([0-9]+) ]] || fail "no counts: $out"
	assert_eq $((BASH_REMATCH[1] + 2)) "${BASH_REMATCH[3]}" "alice's jobs in the system instance: the two above only"
	assert_eq "${BASH_REMATCH[2]}" "${BASH_REMATCH[4]}" "alice's jobs in her own instance"
}

# A process of alice's outside the sandbox: her sandboxed job can neither
# signal it nor look into /proc/PID/ (its root, its environment), which an
# unsandboxed job of hers can.
test_a_sandboxed_job_cannot_signal_or_look_into_processes_outside() {
	setup_users
	setpriv --reuid=alice --regid=alice --init-groups -- sleep 300 &
	local pid=$! probe out
	on_exit "kill $pid 2>/dev/null"
	probe="kill -0 $pid 2>/dev/null && echo signalled; ls /proc/$pid/root/ >/dev/null 2>&1 && echo root; cat /proc/$pid/environ >/dev/null 2>&1 && echo environ; echo done"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -- "$probe") || fail "unsandboxed: $out"
	assert_eq $'signalled\nroot\nenviron\ndone' "$out" "an unsandboxed job of alice's"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -p PrivateTmp=yes -- "$probe") || fail "sandboxed: $out"
	assert_eq done "$out" "a sandboxed job of alice's"
	pid_alive "$pid" || fail "the process outside is gone"
}

# The cgroup tree is read-only in a sandbox: even root's job, which owns it,
# cannot move itself out of its cgroup.
test_the_cgroup_tree_is_read_only_in_a_sandbox() {
	local out
	out=$(bgrun run --wait -q -C / -p PrivateNetwork=yes -- \
		'before=$(cat /proc/self/cgroup); (echo $$ > /sys/fs/cgroup/cgroup.procs) 2>&1 | sed "s/.*: //"; [ "$(cat /proc/self/cgroup)" = "$before" ] && echo stayed') ||
		fail "run: $out"
	assert_eq $'Read-only file system\nstayed' "$out" "a sandboxed job's write to the root cgroup"
}

# The red team's tricks from inside a strict sandbox, as alice: a user
# namespace of her own (unshare -Urm) gives her a mount namespace, but the
# sandbox's mounts came locked from a more privileged one, and its Landlock
# domain (which handles file accesses) refuses any change of the mount
# tree: she can neither unmount nor remount them writable (unshare itself
# cannot make its mounts private: its own message); setuid programs gain
# nothing (no_new_privs); PID 1's root is out of reach.
test_the_sandbox_survives_its_own_user_namespace_and_setuid() {
	setup_users
	local out
	out=$(as_user alice "$BGRUN" run --wait -q -C / -p ProtectSystem=strict -p InaccessiblePaths=/etc/shadow -- '
		unshare -Urm sh -c "umount -l /usr 2>/dev/null && echo umounted; mount -o remount,bind,rw /usr 2>/dev/null && echo remounted; umount /etc/shadow 2>/dev/null && echo unhidden; touch /usr/x 2>/dev/null && echo written" 2>&1 | grep -v "^unshare: cannot change root filesystem propagation"
		grep -q "^NoNewPrivs:.1" /proc/self/status && echo no-new-privs
		ls /proc/1/root/ >/dev/null 2>&1 && echo pid1-root
		echo done') || fail "run: $out"
	assert_eq $'no-new-privs\ndone' "$out" "alice's tricks in her sandbox"
}

# The user's runtime directory is where the user's own daemons take work
# (podman's socket, gpg's agent, the session bus): a sandboxed job finds it
# empty and its own, writable, and what it writes there stays inside. A
# socket a daemon of alice's listens on there is out of its reach, and in
# reach of an unsandboxed job of hers.
test_the_users_runtime_directory_is_a_tmpfs_of_the_jobs_own() {
	setup_users
	local dir=/run/user/$ALICE made=0 out
	if [[ ! -d $dir ]]; then
		mkdir -p -m 0700 "$dir" && chown alice:alice "$dir" && made=1
	fi
	[[ $made == 1 ]] && on_exit "rm -rf $dir"
	# shellcheck disable=SC2016
	as_user alice python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(8)
os.close(1)
while True:
    c, _ = s.accept(); c.sendall(b"daemon\n"); c.close()' "$dir/daemon-$$.sock" &
	local daemon=$!
	on_exit "kill $daemon 2>/dev/null; rm -f $dir/daemon-$$.sock"
	wait_until 10 test -S "$dir/daemon-$$.sock" || fail "the daemon did not listen"
	local probe="python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"$dir/daemon-$$.sock\"); print(s.recv(16).decode().strip())' 2>/dev/null || echo unreachable"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -- "$probe") || fail "unsandboxed: $out"
	assert_eq daemon "$out" "an unsandboxed job of alice's reaches her daemon"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -p ProtectSystem=strict -- \
		"$probe; ls -A $dir | wc -l; touch $dir/mine && echo written; stat -c %U:%a $dir") || fail "sandboxed: $out"
	assert_eq $'unreachable\n0\nwritten\nalice:700' "$out" "a sandboxed job of alice's"
	[[ ! -e $dir/mine ]] || fail "the sandboxed job wrote the real runtime directory"
	pid_alive "$daemon" || fail "the daemon is gone"
}

# The red team's way out through a symlink: a read-write path is mounted
# where its link leads, which its words do not sort by, and its copy of the
# host's tree predates the sandbox's mounts. alice's ReadWritePaths to a
# link to /run (a path that sorts after every exit) brought the system bus
# back, root's link to /var/lib the job store. Whatever the copies bring,
# the exits are closed again over them; and no path option makes the cgroup
# tree writable.
test_a_symlinked_read_write_path_reopens_no_exit() {
	setup_users
	local link=/var/tmp/bgrun-exit-$$ out
	as_user alice ln -s /run "$link"
	on_exit "rm -f $link $link-lib"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -p ProtectSystem=strict -p ReadWritePaths="$link" -- \
		"busctl --system --no-pager list >/dev/null 2>&1 && echo system-bus; test -S /run/dbus/system_bus_socket && echo socket; echo done") ||
		fail "alice: $out"
	assert_eq done "$out" "alice's job with a read-write link to /run"
	ln -s /var/lib "$link-lib"
	out=$(bgrun run --wait -q -C / -p ProtectSystem=strict -p ReadWritePaths="$link-lib" -- \
		"ls /var/lib/bgrun/jobs >/dev/null 2>&1 && echo job-store; touch /var/lib/bgrun-probe-$$ && rm /var/lib/bgrun-probe-$$ && echo writable") ||
		fail "root: $out"
	assert_eq writable "$out" "root's job with a read-write link to /var/lib: writable, but no job store"
	# Under strict, / read-only makes /sys so before its exit is applied:
	# a link to /sys/fs brings back a writable cgroup tree unless the exit
	# is applied again all the same.
	ln -s /sys/fs "$link-fs"
	on_exit "rm -f $link-fs; rmdir /sys/fs/cgroup/bgrun-probe-$$ 2>/dev/null"
	out=$(bgrun run --wait -q -C / -p ProtectSystem=strict -p ReadWritePaths="$link-fs" -- \
		"mkdir /sys/fs/cgroup/bgrun-probe-$$ 2>/dev/null && echo cgroup-written; echo done") || fail "root, /sys/fs: $out"
	assert_eq done "$out" "root's job under strict with a read-write link to /sys/fs"
	out=$(bgrun run -q -C / -p PrivateTmp=yes -p ReadWritePaths=/sys/fs/cgroup/system.slice -- true 2>&1) &&
		fail "a writable cgroup tree was taken: $out"
	assert_contains "$out" "ReadWritePaths=/sys/fs/cgroup/system.slice lies inside /sys, which every sandbox keeps read-only"
}

# The kernel's settings are read-only in every sandbox, as systemd's
# ProtectKernelTunables= has them: a job of root's, which may write root's
# files with no capability, sets no core_pattern (a program the kernel would
# run as root, outside) and nothing in /sys. Asked with access(W_OK), which
# says EROFS for a read-only mount: nothing is written.
test_the_kernels_settings_are_read_only_in_a_sandbox() {
	local probe='for f in /proc/sys/kernel/core_pattern /sys/class/net/lo/mtu; do [ -w $f ] && echo "$f writable" || echo "$f read-only"; done'
	local out
	out=$(bgrun run --wait -q -C / -- "$probe") || fail "unsandboxed: $out"
	[[ $out == *writable* ]] ||
		skip "tools/sandbox makes /proc/sys and /sys read-only for every process (they are the host's): a sandbox's own read-only mounts of them cannot be told apart here (test-sandbox-plan checks they are planned)"
	assert_eq $'/proc/sys/kernel/core_pattern writable\n/sys/class/net/lo/mtu writable' "$out" "root's job without a sandbox"
	out=$(bgrun run --wait -q -C / -p PrivateTmp=yes -- "$probe") || fail "sandboxed: $out"
	assert_eq $'/proc/sys/kernel/core_pattern read-only\n/sys/class/net/lo/mtu read-only' "$out" "root's sandboxed job"
	out=$(bgrun run --wait -q -C / -p ProtectSystem=strict -- "$probe") || fail "strict: $out"
	assert_eq $'/proc/sys/kernel/core_pattern read-only\n/sys/class/net/lo/mtu read-only' "$out" "root's job under ProtectSystem=strict"
}
