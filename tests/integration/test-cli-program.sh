# SPDX-License-Identifier: MIT
# bgrun driven from a program (issue #25): a deadline on every call, exit
# codes that say what happened (240-247, src/core/errors.h), output by offset,
# input kept open, secrets kept back, listings for dashboards.

# ms_since START_NS: milliseconds since date +%s%N gave START_NS.
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

test_stopped_bgrund_list_status_run_exit_within_the_deadline() {
	local id start rc ms
	id=$(bgrun run -q -- 'sleep 300') || fail "run"
	stop_bgrund "bgrun kill $id >/dev/null 2>&1"
	for verb in "list" "status $id" "run -- true"; do
		start=$(date +%s%N)
		# timeout(1) only so that a hang fails the test instead of holding it.
		# shellcheck disable=SC2086
		timeout 60 bgrun --call-timeout 2s $verb >/dev/null 2>err; rc=$?
		ms=$(ms_since "$start")
		assert_eq 245 "$rc" "exit status of '$verb' with bgrund stopped ($(cat err))"
		assert_le "$ms" 4000 "ms '$verb' took with a 2 s deadline"
		assert_contains "$(cat err)" "did not answer" "the error of '$verb'"
	done
	# The variable sets it too.
	start=$(date +%s%N)
	BGRUN_CALL_TIMEOUT=1s timeout 60 bgrun list >/dev/null 2>&1; rc=$?
	assert_eq 245 "$rc" "list with BGRUN_CALL_TIMEOUT=1s"
	assert_le "$(ms_since "$start")" 3000 "ms of list with BGRUN_CALL_TIMEOUT=1s"
	kill -CONT "$BGRUND"
	assert_eq running "$(job_status "$id")" "the job once bgrund goes on"
}

# A run that gave up (its call deadline passed while bgrund was stopped)
# never starts later: bgrund reads the Launch after its LaunchDeadlineUSec
# and refuses it, DeadlinePassed, no record (issue #32 row 1).
test_a_run_that_gave_up_never_starts_later() {
	local mark=/run/bgrun-test-deadline-ran
	rm -f "$mark"
	stop_bgrund "rm -f $mark"
	timeout 60 bgrun --call-timeout 1s run -s gave-up -- "touch $mark" >/dev/null 2>err
	assert_eq 245 "$?" "run with bgrund stopped ($(cat err))"
	sleep 1.5
	kill -CONT "$BGRUND"
	sleep 1.5
	[[ ! -e $mark ]] || fail "the command ran after its caller gave up"
	assert_eq "" "$(bgrun list -s gave-up --json | jq -r '.[].id' 2>/dev/null)" "no record of it"
	# Over the bus: a deadline already passed is DeadlinePassed, and nothing is kept.
	local out
	out=$(busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager Launch 'sssa{sv}' \
		"touch $mark" gave-up / 1 LaunchDeadlineUSec t 1 2>&1) && fail "a passed deadline launched: $out"
	assert_contains "$out" "LaunchDeadlineUSec passed"
	[[ ! -e $mark ]] || fail "a Launch past its deadline ran"
	# One in the future runs.
	busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager Launch 'sssa{sv}' \
		"touch $mark" gave-up / 1 LaunchDeadlineUSec t $((($(date +%s) + 60) * 1000000)) >/dev/null || fail "Launch"
	wait_until 10 test -e "$mark" || fail "a Launch before its deadline did not run"
}

test_wait_notices_a_stopped_bgrund_within_the_deadline() {
	local id wpid before start rc
	id=$(bgrun run -q -- 'sleep 300') || fail "run"
	timeout 60 bgrun --call-timeout 2s wait "$id" >/dev/null 2>err &
	wpid=$!
	sleep 3 # longer than the deadline: waiting is not bounded by it
	kill -0 "$wpid" 2>/dev/null || fail "wait ended while bgrund answered: $(cat err)"
	# Taken before the stop too: a busy shell that is late to read the
	# clock after it must not make wait seem to give up early.
	before=$(date +%s%N)
	stop_bgrund "bgrun kill $id >/dev/null 2>&1"
	start=$(date +%s%N)
	wait "$wpid"; rc=$?
	assert_eq 245 "$rc" "wait's exit status once bgrund stopped ($(cat err))"
	# Not before the deadline it names (issue #36, row 8; a ping in flight
	# at the stop may have left a moment earlier), a tenth after it at most.
	assert_le 1950 "$(ms_since "$before")" "ms from before the stop to wait's end, deadline 2 s"
	assert_le "$(ms_since "$start")" 2500 "ms from the stop to wait's end, deadline 2 s"
	# logs -f the same.
	timeout 60 bgrun --call-timeout 2s logs -f "$id" >/dev/null 2>&1 &
	wpid=$!
	start=$(date +%s%N)
	wait "$wpid"; rc=$?
	assert_eq 245 "$rc" "logs -f with bgrund stopped"
	assert_le "$(ms_since "$start")" 2500 "ms logs -f took"
}

test_each_error_class_has_its_own_exit_code() {
	local rc id out
	bgrun status aaaaaaaaaaaa >/dev/null 2>&1; rc=$?
	assert_eq 240 "$rc" "no such job"
	bgrun run -C /nonexistent-dir -- true >/dev/null 2>&1; rc=$?
	assert_eq 241 "$rc" "a cwd that does not exist"
	bgrun --address unix:path=/run/nothing-here list >/dev/null 2>&1; rc=$?
	assert_eq 245 "$rc" "nothing listens"
	ensure_user cliprog
	as_user cliprog "$(command -v bgrun)" reap >/dev/null 2>&1; rc=$?
	assert_eq 242 "$rc" "reap as a user who is no admin"
	bgrun help | grep -q "240" || fail "bgrun help lists the exit codes"
	# wait -t: still running is its own code; a job's own 1 stays 1.
	id=$(bgrun run -q -- 'sleep 300') || fail "run"
	trap 'bgrun kill "$id" >/dev/null 2>&1' EXIT
	bgrun wait -t 0.3s "$id" >/dev/null 2>&1; rc=$?
	assert_eq 246 "$rc" "wait -t on a running job"
	bgrun kill "$id" >/dev/null
	id=$(bgrun run -q -- 'exit 1') || fail "run"
	bgrun wait -t 5s "$id" >/dev/null 2>&1; rc=$?
	assert_eq 1 "$rc" "wait on a job that exited 1"
	bgrun run --wait -q -- 'exit 3' >/dev/null 2>&1; rc=$?
	assert_eq 3 "$rc" "run --wait keeps the job's status"
	# --json: one object on stdout.
	out=$(bgrun status aaaaaaaaaaaa --json 2>/dev/null); rc=$?
	assert_eq 240 "$rc" "status --json of no job"
	assert_eq NoSuchJob "$(jq -r .error <<<"$out")" "the error's name ($out)"
	assert_contains "$(jq -r .message <<<"$out")" "aaaaaaaaaaaa" "the message"
}

test_limit_exceeded_has_its_code() {
	local rc out
	mkdir -p /etc/bgrun/bgrund.conf.d
	printf '%s\n' "[Limits]" "MaxRunningJobs=1" >/etc/bgrun/bgrund.conf.d/90-test.conf
	trap 'rm -f /etc/bgrun/bgrund.conf.d/90-test.conf; systemctl reset-failed bgrund.service; systemctl restart bgrund.service' EXIT
	systemctl reset-failed bgrund.service
	systemctl restart bgrund.service || fail "bgrund did not restart"
	id=$(bgrun run -q -- 'sleep 300') || fail "run"
	out=$(bgrun run --json -- true 2>/dev/null); rc=$?
	bgrun kill "$id" >/dev/null
	assert_eq 243 "$rc" "a second job past MaxRunningJobs=1"
	assert_eq LimitExceeded "$(jq -r .error <<<"$out")" "the --json error ($out)"
}

test_logs_offset_returns_only_the_new_bytes() {
	local id out next
	id=$(bgrun run -q -- 'printf "one\n"; sleep 1.5; printf "two\n"; sleep 300') || fail "run"
	trap 'bgrun kill "$id" >/dev/null 2>&1' EXIT
	wait_until 10 bash -c "[[ \$(bgrun logs $id) == one ]]" || fail "first line: $(bgrun logs "$id")"
	out=$(bgrun logs "$id" --offset 0 --json) || fail "logs --offset 0 --json"
	assert_eq '"one\n"' "$(jq .data <<<"$out")" "data from 0"
	assert_eq 4 "$(jq -r .next <<<"$out")" "next after 'one\\n'"
	assert_eq false "$(jq -r .complete <<<"$out")" "complete while it runs"
	wait_until 10 bash -c "[[ \$(bgrun logs $id --offset 4) == two ]]" || fail "second line by offset: $(bgrun logs "$id" --offset 4)"
	out=$(bgrun logs "$id" --offset 4 --json) || fail "logs --offset 4 --json"
	assert_eq '"two\n"' "$(jq .data <<<"$out")" "only the new bytes"
	next=$(jq -r .next <<<"$out")
	assert_eq 8 "$next" "next"
	assert_eq "" "$(bgrun logs "$id" --offset "$next")" "nothing new yet"
	# Invalid UTF-8 is replaced in data; next counts raw bytes.
	bgrun kill "$id" >/dev/null
	id=$(bgrun run -q -- 'printf "a\377b"') || fail "run"
	bgrun wait "$id" >/dev/null || fail "wait"
	out=$(bgrun logs "$id" --offset 0 --json) || fail "logs --json of invalid UTF-8"
	assert_eq "a�b" "$(jq -j .data <<<"$out")" "U+FFFD for the bad byte"
	assert_eq 3 "$(jq -r .next <<<"$out")" "next in raw bytes"
	assert_eq true "$(jq -r .complete <<<"$out")" "complete once ended"
	# -f from an offset: what follows it, to the end.
	id=$(bgrun run -q -- 'printf "skip\nkeep\n"') || fail "run"
	bgrun wait "$id" >/dev/null
	assert_eq keep "$(timeout 20 bgrun logs -f --offset 5 "$id")" "logs -f --offset 5"
}

test_logs_plain_strips_a_terminal_jobs_control_sequences() {
	local id out
	id=$(bgrun run -q --tty -- 'printf "\033[31mred\033[0m\r\nprogress 10%%\rprogress 100%%\r\n\a"') || fail "run --tty"
	bgrun wait "$id" >/dev/null || fail "wait"
	out=$(bgrun logs "$id" --plain)
	assert_eq "red"$'\n'"progress 100%" "$out" "the plain text"
	assert_contains "$(bgrun logs "$id" | od -c)" '\r' "without --plain, the terminal's bytes"
	assert_eq '"red\nprogress 100%\n"' "$(bgrun logs "$id" --plain --offset 0 --json | jq .data)" "--plain --json"
}

test_open_stdin_then_send_reaches_the_job() {
	local id
	# No terminal, and nothing on this stdin: the input stays open all the same.
	id=$(bgrun run --open-stdin -q -- 'while read l; do echo "got $l"; done' </dev/null) || fail "run --open-stdin"
	trap 'bgrun kill "$id" >/dev/null 2>&1' EXIT
	sleep 0.3
	bgrun send "$id" hello || fail "send after --open-stdin"
	wait_until 10 bash -c "[[ \$(bgrun logs $id) == 'got hello' ]]" || fail "the job read it: $(bgrun logs "$id")"
	bgrun send "$id" --eof || fail "send --eof"
	assert_eq 0 "$(bgrun wait -t 10s "$id" >/dev/null; echo $?)" "the job ends at EOF"
	assert_eq pipe "$(jget "$id" .stdin)" "the record's stdin"
}

test_secrets_do_not_reach_the_job_but_env_allow_passes_one() {
	local out
	out=$(GH_PAT=ghp_secret DATABASE_URL=postgres://u:pw@db/x PLAIN_URL=https://example.org/x \
		GIT_AUTHOR_NAME=me bgrun run --wait -q -- env) || fail "run --wait env"
	assert_not_contains "$out" "GH_PAT" "a _PAT variable"
	assert_not_contains "$out" "pw@db" "a password in a URL"
	assert_contains "$out" "PLAIN_URL=https://example.org/x" "a URL without a password"
	assert_not_contains "$out" "GIT_AUTHOR_NAME" "a name with AUTH in it"
	out=$(GH_PAT=ghp_secret GIT_AUTHOR_NAME=me bgrun run --env-allow GIT_AUTHOR_NAME --wait -q -- env) || fail "run --env-allow"
	assert_contains "$out" "GIT_AUTHOR_NAME=me" "--env-allow passes it"
	assert_not_contains "$out" "GH_PAT" "and only it"
	expect_fail bgrun run --env-allow GH_PAT --clean-env -- true
	assert_contains "$ERR_OUT" "--clean-env"
	bgrun help run | grep -q -- "--env-allow" || fail "bgrun help run names --env-allow"
}

test_list_status_json_has_exit_code_and_times() {
	local a b out
	a=$(bgrun run -q -s cliprog-list -- 'sleep 300') || fail "run"
	trap 'bgrun kill "$a" >/dev/null 2>&1' EXIT
	b=$(bgrun run -q -s cliprog-list -- 'exit 7') || fail "run"
	bgrun wait "$b" >/dev/null
	out=$(bgrun list -s cliprog-list --status running --json) || fail "list --status running --json"
	assert_eq "$a" "$(jq -r '.[].id' <<<"$out")" "only the running job"
	assert_eq -1 "$(jq -r '.[0].exit_code' <<<"$out")" "a running job's exit_code"
	assert_ne null "$(jq -r '.[0].started_at' <<<"$out")" "started_at"
	out=$(bgrun list -s cliprog-list --status exited --json) || fail "list --status exited --json"
	assert_eq "$b" "$(jq -r '.[].id' <<<"$out")" "only the exited job"
	assert_eq 7 "$(jq -r '.[0].exit_code' <<<"$out")" "its exit_code"
	assert_ne null "$(jq -r '.[0].finished_at' <<<"$out")" "finished_at"
	assert_eq "$b" "$(bgrun ls -s cliprog-list --status exited | awk 'NR > 1 {print $1}')" "the table, filtered"
	expect_fail bgrun list --status nonsense
	assert_contains "$ERR_OUT" "nonsense"
	bgrun forget "$b" >/dev/null
}

test_attach_gives_back_a_tty_jobs_terminal() {
	local id out
	id=$(bgrun run -q --tty -- 'read l; echo "got $l"; sleep 300') || fail "run --tty"
	trap 'bgrun kill "$id" >/dev/null 2>&1' EXIT
	# script(1) gives attach a terminal; the line typed reaches the job.
	out=$( (sleep 1; printf 'again\r'; sleep 1.5; printf '\035\035\035') |
		timeout 20 script -qec "bgrun attach $id" /dev/null 2>&1) || fail "attach: $out"
	assert_contains "$out" "got again" "the job's answer through attach"
	assert_contains "$out" "Detached" "^] three times detaches"
	assert_eq running "$(job_status "$id")" "the job runs on"
	expect_fail bgrun attach "$id" </dev/null
	assert_contains "$ERR_OUT" "terminal"
	bgrun kill "$id" >/dev/null
	local plain
	plain=$(bgrun run -q -- true) || fail "run"
	expect_fail bgrun attach "$plain"
	assert_contains "$ERR_OUT" "not started with --tty"
}

test_readme_from_a_program_runs() {
	local readme out
	readme=$(dirname "${BASH_SOURCE[0]}")/../../README.md
	# The first sh block of "### From a program".
	awk '/^### From a program/ {sec=1} sec && /^```sh/ {grab=1; next} grab && /^```/ {exit} grab' "$readme" >prog.sh
	(($(wc -l <prog.sh) >= 10)) || fail "no example in the README's From a program: $(cat prog.sh)"
	out=$(timeout 60 bash prog.sh 2>&1) || fail "the example failed: $out"
	assert_contains "$out" "got hello" "the job's output, polled by offset"
	assert_contains "$out" "exit 0" "wait's status"
	assert_contains "$out" '"exit_code": 0' "list --status exited --json"
	bgrun forget --ended -s ci >/dev/null
}

# A stopped bgrund --listen: the authentication is with bgrund itself, and
# sd-bus heeds no call's timeout until it is done.
test_stopped_listen_socket_exits_within_the_deadline() {
	local bgrund pid start rc out dir
	bgrund=$(systemctl show -P ExecStart bgrund.service | sed -n 's/.*path=\([^ ;]*\).*/\1/p')
	[[ -x $bgrund ]] || fail "no bgrund found from bgrund.service: $bgrund"
	# A directory of its own: the tests share their working directory.
	dir=$(mktemp -d "$PWD/stopped-listen.XXXXXX")
	cd "$dir" || fail "cd $dir"
	mkdir -p state
	DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/no-bus-here "$bgrund" --listen="unix:path=$PWD/p2p.sock" \
		--state-dir="$PWD/state" --containment-mode=report-only 2>bgrund.log &
	pid=$!
	trap 'kill -CONT $pid 2>/dev/null; kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
	wait_until 10 test -S p2p.sock || fail "bgrund --listen did not listen: $(cat bgrund.log)"
	bgrun --address "unix:path=$PWD/p2p.sock" list >/dev/null || fail "list over p2p"
	# Waiting longer than the deadline while bgrund answers: its pings are answered there too.
	out=$(timeout 60 bgrun --call-timeout 1s --address "unix:path=$PWD/p2p.sock" run --wait -q -- 'sleep 3; echo done') ||
		fail "run --wait of 3 s with a 1 s deadline over p2p: $out"
	assert_eq done "$out" "the job's output"
	kill -STOP "$pid"
	start=$(date +%s%N)
	timeout 60 bgrun --call-timeout 2s --address "unix:path=$PWD/p2p.sock" list >/dev/null 2>err; rc=$?
	assert_eq 245 "$rc" "list over a stopped bgrund --listen ($(cat err))"
	assert_le "$(ms_since "$start")" 4000 "ms it took, deadline 2 s"
	start=$(date +%s%N)
	BGRUN_ADDRESS="unix:path=$PWD/p2p.sock" timeout 60 bgrun --call-timeout 2s run -- true >/dev/null 2>err; rc=$?
	assert_eq 245 "$rc" "run over a stopped bgrund --listen ($(cat err))"
	assert_le "$(ms_since "$start")" 4000 "ms run took"
}
