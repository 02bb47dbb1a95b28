# SPDX-License-Identifier: MIT
# A sandbox with no way out, second round (issue #48): what a red team got
# out through after the first. Every sandboxed job has a /dev of its own
# (none of the host's terminals: a job read what its user typed), System V
# IPC of its own, Unix sockets only beneath its writable paths, no write
# to a FIFO or device outside them, and git's hooks and config out of its
# reach (test-sandbox-git.sh). Each test shows the way out open without a
# sandbox, so that it can tell.

# A terminal of alice's, held open outside as her login's is: a sandboxed
# job of hers finds none of the host's terminals, and no disk, kmsg or
# console; its /dev is what the contract lists, and nothing can be made in
# it, not even by root's job.
test_the_hosts_terminals_are_not_in_a_sandbox() {
	setup_users
	local held out
	held=$(as_user alice mktemp /tmp/bgrun-pty.XXXXXX)
	# shellcheck disable=SC2016
	as_user alice python3 -c '
import os, pty, sys, time
m, s = pty.openpty()
open(sys.argv[1], "w").write(os.ttyname(s) + "\n")
while True:
    data = os.read(m, 100)' "$held" &
	local pid=$!
	on_exit "kill $pid 2>/dev/null; rm -f $held"
	wait_until 10 test -s "$held" || fail "no terminal was opened outside"
	local pts
	pts=$(cat "$held")
	local probe="test -e $pts && echo seen; { echo typed > $pts; } 2>/dev/null && echo written; echo done"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -- "$probe") || fail "unsandboxed: $out"
	assert_eq $'seen\nwritten\ndone' "$out" "an unsandboxed job of alice's reaches her terminal $pts"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -p ProtectSystem=strict -- \
		"$probe; ls -A /dev | tr '\n' ' '; echo; ls -A /dev/pts | tr '\n' ' '; echo; readlink /dev/ptmx; test -w /dev/null && echo null-writable") ||
		fail "sandboxed: $out"
	assert_eq $'done\nfd full null ptmx pts random shm stderr stdin stdout tty urandom zero \nptmx \npts/ptmx\nnull-writable' \
		"$out" "a sandboxed job of alice's"
	out=$(bgrun run --wait -q -C / -p PrivateTmp=yes -- \
		'touch /dev/newfile 2>/dev/null && echo made; mkdir /dev/newdir 2>/dev/null && echo made-dir; test -e /dev/kmsg && echo kmsg; test -e /dev/console && echo console; ls /dev | grep -c "^[hsv]d[a-z]\|^nvme" ; echo done') ||
		fail "root: $out"
	assert_eq $'0\ndone' "$out" "root's sandboxed job: nothing made, no kmsg, no console, no disk"
	[[ ! -e /dev/newfile ]] || fail "a file was made in the host's /dev"
}

# A sandboxed job that asks for a terminal gets one of its own devpts
# instance: tty names it, programs that need one (tmux) work, and it is its
# user's.
test_a_sandboxed_terminal_job_has_a_terminal_of_its_own() {
	setup_users
	local id out
	id=$(as_user alice "$BGRUN" run -q --tty -C / -p ProtectSystem=strict -p PrivateTmp=yes -- \
		'tty; test -t 0 && test -t 1 && echo is-a-terminal; stat -c %U $(tty); stty size; ls /dev/pts | tr "\n" " "; echo;
		 tmux -S /tmp/t new-session -d "sleep 30" && tmux -S /tmp/t list-sessions -F "tmux:#{session_windows}"; tmux -S /tmp/t kill-server') ||
		fail "run --tty: $id"
	as_user alice "$BGRUN" wait "$id" >/dev/null || fail "the terminal job failed: $(as_user alice "$BGRUN" logs --plain "$id")"
	out=$(as_user alice "$BGRUN" logs --plain "$id" | tr -d '\r')
	assert_contains "$out" $'/dev/pts/0\nis-a-terminal\nalice\n24 80\n0 ptmx ' "its terminal"
	assert_contains "$out" "tmux:1" "tmux in it"
}

# System V shared memory (and the other IPC objects) of alice's outside is
# out of reach of her sandboxed job, which has IPC of its own.
test_a_sandbox_has_ipc_of_its_own() {
	setup_users
	local id out
	id=$(as_user alice ipcmk -M 4096 | grep -o '[0-9]*$') || fail "ipcmk"
	# tools/sandbox has no IPC namespace of its own: the segment is the host's.
	on_exit "ipcrm -m $id 2>/dev/null"
	local probe="ipcs -m | awk '\$2 == $id' | wc -l"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -- "$probe") || fail "unsandboxed: $out"
	assert_eq 1 "$out" "an unsandboxed job of alice's sees her segment"
	out=$(as_user alice "$BGRUN" run --wait -q -C / -p PrivateTmp=yes -- "$probe; ipcmk -M 4096 >/dev/null && ipcs -m | grep -c alice") ||
		fail "sandboxed: $out"
	assert_eq $'0\n1' "$out" "a sandboxed job of alice's: her segment is not there, its own is"
	assert_eq 1 "$(ipcs -m | awk -v id="$id" '$2 == id' | wc -l)" "the segment outside is untouched"
}
