# SPDX-License-Identifier: MIT
# A job's sandbox (issue #33): what a job may reach, with systemd.exec(5)'s
# names, enforced by the kernel or refused: PrivateNetwork, PrivateTmp,
# ProtectSystem, ProtectHome, ReadWritePaths, ReadOnlyPaths, InaccessiblePaths.

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
	assert_eq '{"PrivateNetwork":true,"ProtectGit":true,"network":"own","mechanisms":["network-namespace","mount-namespace","ipc-namespace","landlock","seccomp-unotify"]}' "$(jget "$id" '.sandbox' | jq -c .)" "the record's sandbox"
	assert_contains "$(bgrun status "$id")" "Sandbox: PrivateNetwork=yes, ProtectGit=yes, network=own (network-namespace, mount-namespace, ipc-namespace, landlock, seccomp-unotify)"
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

# A user's own bgrund has no privilege over the host's namespaces: its
# sandboxed jobs get a user namespace of their own, so PrivateNetwork and
# ProtectSystem are enforced there too. Where even that is not allowed
# (the user's bgrund.service with RestrictNamespaces=~user) they are
# refused: nothing runs, no record.
test_the_sandbox_in_the_user_instance_is_enforced_or_refused() {
	ensure_user alice
	local out
	# shellcheck disable=SC2016
	out=$(bgrun-sandbox-login alice -- bash -c '
		bgrun --user run --wait -q -p PrivateNetwork=yes -p ProtectSystem=strict -p ReadWritePaths="$HOME" -- \
			"tail -n +3 /proc/self/net/dev | cut -d: -f1 | tr -d \" \"; touch /usr/x 2>&1 | sed \"s/.*: //\"; echo x > \$HOME/w && echo home written"
		mkdir -p ~/.config/systemd/user/bgrund.service.d
		printf "[Service]\nRestrictNamespaces=~user\n" > ~/.config/systemd/user/bgrund.service.d/90-test.conf
		systemctl --user daemon-reload; systemctl --user restart bgrund.service
		n=$(bgrun --user list --json | jq length)
		bgrun --user run --wait -p PrivateNetwork=yes -- "touch \$HOME/ran" 2>&1; echo "rc=$?"
		echo "records $n $(bgrun --user list --json | jq length)"
		[ -e "$HOME/ran" ] && echo "it ran"
		rm -rf ~/.config/systemd/user/bgrund.service.d; systemctl --user daemon-reload; systemctl --user restart bgrund.service' 2>&1)
	assert_contains "$out" $'lo\nRead-only file system\nhome written' "alice's --user job, sandboxed"
	assert_contains "$out" "Sandbox not available: PrivateNetwork cannot be enforced here"
	# bgrund's message says nothing ran; the command line does not say it again.
	assert_eq 1 "$(grep -oE 'nothing (ran|was run)' <<<"$out" | wc -l)" "'nothing ran' once in: $out"
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
	assert_eq '{"PrivateTmp":true,"ProtectGit":true,"mechanisms":["mount-namespace","ipc-namespace","landlock","seccomp-unotify"]}' "$(jget "$id" '.sandbox' | jq -c .)" "the record's sandbox"
	id=$(bgrun run -q -C / -p PrivateTmp=yes -p PrivateNetwork=yes -- true) || fail "run"
	assert_eq '{"PrivateNetwork":true,"PrivateTmp":true,"ProtectGit":true,"network":"own","mechanisms":["network-namespace","mount-namespace","ipc-namespace","landlock","seccomp-unotify"]}' \
		"$(jget "$id" '.sandbox' | jq -c .)" "both"
}

# write_probe DIR...: a job's command that tries to write each DIR (and
# chmod it) and says what it could not, and why.
write_probe() {
	local d script=""
	for d in "$@"; do
		script+="touch '$d/bgrun-probe-$$' 2>/dev/null && rm -f '$d/bgrun-probe-$$' && echo '$d writable' || echo '$d: '\$(touch '$d/bgrun-probe-$$' 2>&1 | sed 's/.*: //'); "
		script+="chmod u+w '$d' 2>/dev/null || echo '$d: no chmod'; "
	done
	echo "$script"
}

# ProtectSystem=strict with ReadWritePaths=D: D is written, nothing else is
# (/etc, /run, the home directory; chmod included), for root and for alice;
# the record and status say so.
test_protect_system_strict_writes_only_read_write_paths() {
	local d out id
	d=$PWD/rw-$$
	mkdir -p "$d"
	out=$(bgrun run --wait -q -C / -- "$(write_probe "$d" /etc /run)") || fail "without a sandbox: $out"
	assert_eq "$d writable"$'\n/etc writable\n/run writable' "$out" "root's job without a sandbox writes all three"
	out=$(bgrun run --wait -q -C / -p ProtectSystem=strict -p ReadWritePaths="$d" -- "$(write_probe "$d" /etc /run)") ||
		fail "strict: $out"
	assert_eq "$d writable"$'\n/etc: Read-only file system\n/etc: no chmod\n/run: Read-only file system\n/run: no chmod' \
		"$out" "root's job under ProtectSystem=strict"
	setup_users
	as_user alice mkdir -p /home/alice/rw-$$
	out=$(as_user alice "$BGRUN" run --wait -q -C /home/alice -- "$(write_probe /home/alice)") || fail "alice: $out"
	assert_eq "/home/alice writable" "$out" "alice's home without a sandbox"
	out=$(as_user alice "$BGRUN" run --wait -q -C /home/alice -p ProtectSystem=strict \
		-p ReadWritePaths="/home/alice/rw-$$ /etc" -- "$(write_probe /home/alice/rw-$$ /home/alice /etc)") ||
		fail "alice strict: $out"
	# ReadWritePaths=/etc gives alice nothing she lacks: a sandbox only takes away.
	assert_eq "/home/alice/rw-$$ writable"$'\n/home/alice: Read-only file system\n/home/alice: no chmod\n/etc: Permission denied\n/etc: no chmod' \
		"$out" "alice's job under ProtectSystem=strict"
	id=$(bgrun run -q -C / -p ProtectSystem=strict -p ReadWritePaths="$d -/nonexistent" -p PrivateTmp=yes -- true) || fail "run"
	assert_eq '{"PrivateTmp":true,"ProtectSystem":"strict","ReadWritePaths":["'"$d"'","-/nonexistent"],"ProtectGit":true,"mechanisms":["mount-namespace","ipc-namespace","landlock","seccomp-unotify"]}' \
		"$(jget "$id" '.sandbox' | jq -c .)" "the record's sandbox"
	assert_contains "$(bgrun status "$id")" "Sandbox: PrivateTmp=yes, ProtectSystem=strict, ReadWritePaths=$d -/nonexistent, ProtectGit=yes (mount-namespace, ipc-namespace, landlock, seccomp-unotify)"
	# ProtectSystem=yes and full: /usr, then /etc too, read-only.
	out=$(bgrun run --wait -q -C / -p ProtectSystem=yes -- "$(write_probe /usr /etc)") || fail "yes: $out"
	assert_eq $'/usr: Read-only file system\n/usr: no chmod\n/etc writable' "$out" "ProtectSystem=yes"
	out=$(bgrun run --wait -q -C / -p ProtectSystem=full -- "$(write_probe /etc)") || fail "full: $out"
	assert_eq $'/etc: Read-only file system\n/etc: no chmod' "$out" "ProtectSystem=full"
}

# InaccessiblePaths hides a file, also under a writable parent: it can be
# neither read nor removed nor replaced, and stays as it was.
test_inaccessible_paths_hide_a_file_under_a_writable_parent() {
	setup_users
	local d=/home/alice/hide-$$ out
	as_user alice bash -c "mkdir -p $d && echo s3cret > $d/secret && mkdir $d/dir && echo x > $d/dir/f"
	out=$(as_user alice "$BGRUN" run --wait -q -C "$d" -p InaccessiblePaths="$d/secret $d/dir" -- \
		"cat secret; ls dir; rm -f secret && echo removed; mv dir elsewhere && echo moved; echo y > y; echo done" 2>&1) ||
		fail "alice: $out"
	assert_not_contains "$out" "s3cret"
	assert_not_contains "$out" "removed"
	assert_not_contains "$out" "moved"
	assert_contains "$out" "done"
	assert_eq s3cret "$(cat "$d/secret")" "the hidden file, afterwards"
	[[ -e $d/y && -e $d/dir/f ]] || fail "the writable parent was not written, or the hidden dir changed"
}

# ProtectHome: yes shows nothing of /root or /home; read-only keeps them
# from being written; tmpfs gives empty writable ones that go with the job.
test_protect_home_yes_read_only_and_tmpfs() {
	local mark=bgrun-test-home-$$ out
	touch "/root/$mark"
	on_exit "rm -f /root/$mark"
	out=$(bgrun run --wait -q -C / -p ProtectHome=yes -- "ls -A /root 2>&1; ls -A /home 2>&1; echo done") || fail "yes: $out"
	assert_not_contains "$out" "$mark"
	assert_contains "$out" "done"
	[[ $(bgrun run --wait -q -C / -- "ls -A /root") == *"$mark"* ]] || fail "the mark is not seen without the sandbox"
	setup_users
	out=$(as_user alice "$BGRUN" run --wait -q -C / -p ProtectHome=read-only -- "$(write_probe /home/alice)") || fail "ro: $out"
	assert_eq $'/home/alice: Read-only file system\n/home/alice: no chmod' "$out" "ProtectHome=read-only"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -p ProtectHome=tmpfs -- \
		"ls -A /home; mkdir /home/alice && echo x > /home/alice/$mark && echo written") || fail "tmpfs: $out"
	assert_eq written "$out" "ProtectHome=tmpfs: empty and writable"
	[[ ! -e /home/alice/$mark ]] || fail "ProtectHome=tmpfs wrote the real home"
}

# The caller's mistakes are InvalidArgs naming what was wrong, and nothing
# runs: a bad word, a relative path, paths that cannot be had together; a
# missing path and one alice cannot reach get the same message; '-' skips
# either.
test_bad_sandbox_values_and_paths_are_invalid_args() {
	local out n
	out=$(bgrun run -p ProtectSystem=bogus -- true 2>&1) && fail "ProtectSystem=bogus ran"
	assert_contains "$out" "Option ProtectSystem must be 'no', 'yes', 'full' or 'strict', not 'bogus'"
	out=$(bgrun run -p ReadOnlyPaths=relative/x -- true 2>&1) && fail "a relative path ran"
	assert_contains "$out" "ReadOnlyPaths entry 1 ('relative/x') is not an absolute path"
	out=$(bgrun run -p ProtectHome=yes -p ReadWritePaths=/home/x -- true 2>&1) && fail "a path under a hidden one ran"
	assert_contains "$out" "ReadWritePaths=/home/x lies inside what ProtectHome=yes hides"
	out=$(busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager Launch 'sssa{sv}' \
		true s / 1 ProtectHome s nope 2>&1) && fail "ProtectHome=nope over the bus: $out"
	assert_contains "$out" "Option ProtectHome must be 'no', 'yes', 'read-only' or 'tmpfs', not 'nope'"
	setup_users
	# A directory of root's that alice may not enter, and what is in it.
	local hidden=/var/lib/bgrun-test-hidden-$$
	mkdir -m 0700 "$hidden" && mkdir "$hidden/inside"
	on_exit "rm -rf $hidden"
	local missing unreachable
	n=$(as_user alice "$BGRUN" list --json | jq length)
	missing=$(as_user alice "$BGRUN" run -C / -p ReadOnlyPaths=/nonexistent/x -- "touch /home/alice/ran" 2>&1) &&
		fail "a missing path ran"
	unreachable=$(as_user alice "$BGRUN" run -C / -p ReadOnlyPaths="$hidden/inside" -- "touch /home/alice/ran" 2>&1) &&
		fail "a path alice cannot reach ran"
	assert_contains "$missing" "ReadOnlyPaths: '/nonexistent/x' does not exist or is not reachable by user alice"
	assert_eq "${missing//\/nonexistent\/x/P}" "${unreachable//"$hidden"\/inside/P}" "missing and unreachable alike"
	[[ ! -e /home/alice/ran ]] || fail "a refused job ran"
	assert_eq "$n" "$(as_user alice "$BGRUN" list --json | jq length)" "alice's records"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -p ReadOnlyPaths="-/nonexistent/x -$hidden/inside" -- "echo ran") ||
		fail "optional paths: $out"
	assert_eq ran "$out" "optional paths are skipped"
}

# A symlink alice swaps under a listed path while her jobs start redirects
# nothing: each job either is refused or gets the directory its lookup
# found, writable there and nowhere else, and each directory shows its own.
test_a_swapped_symlink_redirects_nothing() {
	setup_users
	local h=/home/alice/swap-$$ out i bad=0 ran=0
	as_user alice bash -c "mkdir -p $h/a $h/b && touch $h/a/is-a $h/b/is-b && ln -s a $h/link"
	as_user alice bash -c "while :; do ln -sfn a $h/link.new && mv -T $h/link.new $h/link; ln -sfn b $h/link.new && mv -T $h/link.new $h/link; done" &
	local swapper=$!
	on_exit "kill $swapper 2>/dev/null"
	for i in $(seq 1 20); do
		out=$(as_user alice "$BGRUN" run --wait -q -C / -p ProtectSystem=strict -p ReadWritePaths="$h/link" -- \
			"echo a:\$(ls $h/a) b:\$(ls $h/b); touch $h/a/w 2>/dev/null && echo a-writable; touch $h/b/w 2>/dev/null && echo b-writable; rm -f $h/a/w $h/b/w" 2>&1) || {
			assert_contains "$out" "does not exist or is not reachable by user alice"
			continue
		}
		ran=$((ran + 1))
		[[ $(head -1 <<<"$out") == "a:is-a b:is-b" ]] || { bad=1; echo "job $i saw: $out" >&2; }
		[[ $(grep -c writable <<<"$out") -le 1 ]] || { bad=1; echo "job $i: both writable: $out" >&2; }
	done
	kill "$swapper"
	assert_eq 0 "$bad" "every job saw each directory as itself and at most one writable"
	[[ $ran -gt 0 ]] || fail "no job ran in 20 tries"
}

# --sandbox workspace: the working directory written (its .git too, but
# for git's hooks and config: ProtectGit, test-sandbox-git.sh), nothing
# else (the home directory, /etc), no network, a /tmp of its own, and
# BGRUN_SANDBOX names the profile; read-only writes not even the working
# directory; --network keeps the network; -p adds paths to a profile.
test_sandbox_profiles() {
	setup_users
	local w=/home/alice/ws-$$ out
	as_user alice bash -c "mkdir -p $w/.git/hooks $w/cache && cd $w"
	local d probe='echo $BGRUN_SANDBOX; '
	for d in "$w" "$w/.git" "$w/.git/hooks" /home/alice /etc; do
		probe+="touch $d/p 2>/dev/null && rm $d/p && echo '$d writable' || echo '$d:' \$(touch $d/p 2>&1 | sed 's/.*: //'); "
	done
	probe+='tail -n +3 /proc/self/net/dev | wc -l' 
	out=$(as_user alice "$BGRUN" run --wait -q -C "$w" --sandbox workspace -- "$probe") || fail "workspace: $out"
	assert_eq "workspace"$'\n'"$w writable"$'\n'"$w/.git writable"$'\n'"$w/.git/hooks: Read-only file system"$'\n'"/home/alice: Read-only file system"$'\n/etc: Read-only file system\n1' \
		"$out" "--sandbox workspace"
	out=$(as_user alice "$BGRUN" run --wait -q -C "$w" --sandbox read-only --network -- "$probe") || fail "read-only: $out"
	[[ $(head -2 <<<"$out") == "read-only"$'\n'"$w: Read-only file system" ]] || fail "--sandbox read-only: $out"
	[[ $(tail -1 <<<"$out") -gt 1 ]] || fail "--network kept no network: $out"
	# -p adds a path; git's hooks stay read-only in it.
	out=$(as_user alice "$BGRUN" run --wait -q -C "$w" --sandbox workspace -p ReadWritePaths="/home/alice $w/.git" -- "$probe") ||
		fail "-p: $out"
	assert_eq "custom"$'\n'"$w writable"$'\n'"$w/.git writable"$'\n'"$w/.git/hooks: Read-only file system"$'\n'"/home/alice writable"$'\n/etc: Read-only file system\n1' \
		"$out" "-p adds writable paths to the profile"
	out=$(as_user alice "$BGRUN" run --wait -q -C "$w" --no-network -- "echo \$BGRUN_SANDBOX; tail -n +3 /proc/self/net/dev | wc -l") ||
		fail "--no-network: $out"
	assert_eq $'custom\n1' "$out" "--no-network alone"
	out=$(bgrun run --sandbox nope -- true 2>&1) && fail "--sandbox nope ran"
	assert_contains "$out" "Invalid --sandbox 'nope' (off, workspace or read-only)."
}
