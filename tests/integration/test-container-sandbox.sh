# SPDX-License-Identifier: MIT
# A job's sandbox in a container's setting (tools/sandbox --no-systemd: no
# systemd, no bus, bgrund --listen; issue #33): enforced, or refused.

in_container() {
	[[ ${BGRUN_SANDBOX_KIND:-} == container ]] || skip "needs tools/sandbox --no-systemd (a container's setting)"
}

ADDRESS=unix:path=/run/bgrun/bus

test_private_network_in_a_container() {
	in_container
	local out id
	out=$(bgrun --address "$ADDRESS" run --wait -q -p PrivateNetwork=yes -- \
		"tail -n +3 /proc/self/net/dev | cut -d: -f1 | tr -d ' '" 2>&1) || fail "PrivateNetwork: $out"
	assert_eq lo "$out" "a container's job with PrivateNetwork sees its own loopback only"
	id=$(bgrun --address "$ADDRESS" run -q -p PrivateNetwork=yes -- true) || fail "run"
	assert_eq '{"PrivateNetwork":true,"ProtectGit":true,"network":"own","mechanisms":["network-namespace","mount-namespace","ipc-namespace","landlock","seccomp-unotify"]}' \
		"$(bgrun --address "$ADDRESS" status "$id" --json | jq -c .sandbox)" "the record's sandbox"
}

# A session's network in a container's setting: the session's next job
# reaches its server on 127.0.0.1, another session's does not (issue #50).
test_a_sessions_network_in_a_container() {
	in_container
	local server client id out
	server="python3 -c 'import socket
s = socket.socket(); s.bind((\"127.0.0.1\", 18768)); s.listen(); print(\"listening\", flush=True)
while True: s.accept()[0].sendall(b\"hello\")'"
	client="python3 -c 'import socket
try: print(socket.create_connection((\"127.0.0.1\", 18768), timeout=3).recv(8).decode())
except OSError: print(\"unreachable\")'"
	id=$(bgrun --address "$ADDRESS" run -q -C / -s c-web -p PrivateNetwork=yes -- "$server") || fail "the server"
	on_exit "bgrun --address $ADDRESS kill $id >/dev/null 2>&1"
	wait_until 10 bash -c "bgrun --address $ADDRESS logs $id | grep -q listening" || fail "the server did not listen"
	out=$(bgrun --address "$ADDRESS" run --wait -q -C / -s c-web -p PrivateNetwork=yes -- "$client") || fail "$out"
	assert_eq hello "$out" "a job of the session"
	out=$(bgrun --address "$ADDRESS" run --wait -q -C / -s c-other -p PrivateNetwork=yes -- "$client") || fail "$out"
	assert_eq unreachable "$out" "a job of another session"
}

# AllowedDomains in a container: the proxy, in the job's cgroup subtree,
# reaches a name of its list (the sandbox's /etc/hosts: this loopback,
# listed exactly) and refuses another.
test_allowed_domains_in_a_container() {
	in_container
	local dir pid out
	dir=$(mktemp -d)
	echo "hello from the origin" >"$dir/hello.txt"
	python3 -m http.server --bind 127.0.0.1 --directory "$dir" 18781 >/dev/null 2>&1 &
	pid=$!
	on_exit "kill $pid; rm -rf $dir"
	wait_until 10 curl -sf --noproxy '*' http://127.0.0.1:18781/hello.txt || fail "the origin did not start"
	out=$(bgrun --address "$ADDRESS" run --wait -q -C / --allow-domain origin.bgrun.test:18781 -- \
		'curl -sS http://origin.bgrun.test:18781/hello.txt; curl -s -w %{http_code} http://other.bgrun.test:18781/') ||
		fail "the job: $out"
	assert_contains "$out" "hello from the origin" "a listed name"
	assert_contains "$out" "not in this job's AllowedDomains" "another name"
	assert_contains "$out" $'\n403'
}

test_private_tmp_in_a_container() {
	in_container
	local out
	out=$(bgrun --address "$ADDRESS" run --wait -q -C / -p PrivateTmp=yes -- \
		'echo x > /tmp/bgrun-test-container-tmp; ls -A /tmp' 2>&1) || fail "PrivateTmp: $out"
	assert_eq bgrun-test-container-tmp "$out" "a container's job's /tmp of its own"
	[[ ! -e /tmp/bgrun-test-container-tmp ]] || fail "the job's /tmp reached the container's"
}

# The file-system options in a container's setting: ProtectSystem=strict
# with ReadWritePaths writes only there; InaccessiblePaths hides; a missing
# path is refused, nothing run.
test_file_system_sandbox_in_a_container() {
	in_container
	local d=$PWD/rw-$$ out
	mkdir -p "$d"
	echo s3cret >"$d/secret"
	out=$(bgrun --address "$ADDRESS" run --wait -q -C / -p ProtectSystem=strict -p ReadWritePaths="$d" \
		-p InaccessiblePaths="$d/secret" -- \
		"echo x > $d/w && echo written; touch /etc/bgrun-test-x 2>&1 | sed 's/.*: //'; cat $d/secret 2>/dev/null; echo done" 2>&1) ||
		fail "strict: $out"
	assert_eq $'written\nRead-only file system\ndone' "$out" "a container's job under ProtectSystem=strict"
	[[ ! -e /etc/bgrun-test-x ]] || fail "/etc was written"
	out=$(bgrun --address "$ADDRESS" run -C / -p ReadOnlyPaths=/nonexistent/x -- "touch $d/ran" 2>&1) && fail "a missing path ran"
	assert_contains "$out" "ReadOnlyPaths: '/nonexistent/x' does not exist or is not reachable by user root"
	[[ ! -e $d/ran ]] || fail "the refused job ran"
}

# What every sandbox has, in a container's setting too, for root's job and
# for a user's: none of the container's terminals, IPC of its own, no Unix
# socket outside its writable paths (a tmux server's), its own servers
# inside, no FIFO outside written.
test_no_way_out_in_a_container() {
	in_container
	id alice >/dev/null 2>&1 || useradd -m alice
	local ws=/home/alice/ws out who
	setpriv --reuid=alice --regid=alice --init-groups -- mkdir -p "$ws"
	setpriv --reuid=alice --regid=alice --init-groups -- tmux -S /home/alice/.tmux-sock new-session -d 'sleep 300'
	trap 'setpriv --reuid=alice --regid=alice --init-groups -- tmux -S /home/alice/.tmux-sock kill-server; rm -rf /home/alice/ws /home/alice/outside /home/alice/fifo' EXIT
	setpriv --reuid=alice --regid=alice --init-groups -- mkdir -p /home/alice/outside
	mkfifo /home/alice/fifo && chmod 666 /home/alice/fifo
	local probe="ls -A /dev/pts | tr '\n' ' '; echo
		tmux -S /home/alice/.tmux-sock new-window 'touch /home/alice/outside/ESCAPE' 2>/dev/null && echo tmux-took-it
		tmux -S /tmp/own new-session -d 'sleep 30' && tmux -S /tmp/own list-sessions -F tmux-own && tmux -S /tmp/own kill-server
		(echo x > /home/alice/fifo) 2>&1 | sed 's/.*: //'
		echo done"
	for who in root alice; do
		out=$(setpriv --reuid="$who" --regid="$who" --init-groups -- \
			bgrun --address "$ADDRESS" run --wait -q -C "$ws" --sandbox workspace -- "$probe" 2>&1) || fail "$who: $out"
		assert_eq $'ptmx \ntmux-own\nPermission denied\ndone' "$out" "$who's sandboxed job in a container"
	done
	sleep 0.3
	[[ ! -e /home/alice/outside/ESCAPE ]] || fail "tmux ran a sandboxed job's command outside"
}
