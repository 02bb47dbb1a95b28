# SPDX-License-Identifier: MIT
# Upgrades (issue #13): installing a newer bgrun over a running one. Jobs are
# started by the previous version's bgrund and bgrun-supervisor (built by
# tools/build-previous into BUILD-previous/stage/usr, next to this build's
# staging prefix; which version is said there), then bgrund.service is
# switched to this build and restarted, as a package upgrade does: every
# running job is kept, still watched by its old supervisor, can be killed and
# ends with the right status; every record the old version wrote (none has a
# "format": format 0) is read, its output too, and can be forgotten.

previous_prefix() { echo "${BGRUN_PREFIX%/stage/usr}-previous/stage/usr"; }


restart_bgrund_as() { # what
	systemctl daemon-reload
	systemctl reset-failed bgrund.service
	systemctl restart bgrund.service || { systemctl status bgrund.service; fail "bgrund ($1) did not start"; }
	wait_until 5 busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.freedesktop.DBus.Peer Ping ||
		fail "bgrund ($1) does not answer"
}

job_has_exited() { [[ $(job_status "$1") == exited ]]; }

has_format() { jq -e 'has("format")' "/var/lib/bgrun/jobs/$1/$2" >/dev/null; }

test_upgrade_keeps_running_jobs_and_reads_old_records() {
	local prev old_bgrund old_supervisor new_bgrund
	prev=$(previous_prefix)
	old_bgrund=$(find "$prev" -path '*/libexec/bgrund' -type f 2>/dev/null | head -n 1)
	old_supervisor=$(find "$prev" -path '*/libexec/bgrun-supervisor' -type f 2>/dev/null | head -n 1)
	[[ -x $old_bgrund && -x $old_supervisor && -x $prev/bin/bgrun ]] ||
		skip "no previous version built in $prev (tools/build-previous; tools/test builds it)"
	new_bgrund=$BGRUN_LIBEXECDIR/bgrund

	# A drop-in runs the previous bgrund in bgrund.service (the sandbox's
	# units are in its own UnitPath); its supervisor path is compiled in, so
	# its jobs get the previous bgrun-supervisor.
	local unitdir
	unitdir=$(systemctl show -p UnitPath --value | awk '{ print $1 }')
	[[ -d $unitdir ]] || fail "no unit directory in the sandbox's UnitPath"
	UPGRADE_DROPIN=$unitdir/bgrund.service.d/90-test-upgrade.conf
	mkdir -p "${UPGRADE_DROPIN%/*}"
	printf '%s\n' "[Service]" "ExecStart=" "ExecStart=$old_bgrund" >"$UPGRADE_DROPIN"
	trap 'rm -f "$UPGRADE_DROPIN"; systemctl daemon-reload; systemctl reset-failed bgrund.service; systemctl restart bgrund.service' EXIT
	restart_bgrund_as previous
	assert_eq "$old_bgrund" "$(readlink "/proc/$(bgrund_pid)/exe")" "bgrund before the upgrade"

	# The previous version's jobs, launched with its own CLI.
	local old_bgrun=$prev/bin/bgrun running ending ended killed
	running=$("$old_bgrun" run -- 'i=0; while :; do echo line$i; i=$((i+1)); sleep 0.1; done') || fail "launch (running)"
	# Ends when told, after the upgrade, however slow the machine.
	local go=$PWD/go-ending
	ending=$("$old_bgrun" run -- "while [ ! -e '$go' ]; do sleep 0.05; done; echo late; exit 7") || fail "launch (ending)"
	ended=$("$old_bgrun" run -- 'echo hello-old; exit 3') || fail "launch (ended)"
	killed=$("$old_bgrun" run -- 'sleep 300') || fail "launch (killed)"
	"$old_bgrun" wait "$ended" >/dev/null
	wait_until 5 test -e "/var/lib/bgrun/jobs/$killed/run.json" || fail "no run.json for the job to kill"
	"$old_bgrun" kill "$killed" >/dev/null || fail "the previous bgrund could not kill"
	wait_until 5 bash -c "$(declare -f jget job_status); [[ \$(job_status $running) == running ]] && bgrun logs $running | grep -q line2" ||
		fail "the long job does not run"
	local pid sup ending_sup
	pid=$(jget "$running" .pid)
	sup=$(supervisor_pid "$running")
	ending_sup=$(supervisor_pid "$ending")
	assert_eq "$old_supervisor" "$(readlink "/proc/$sup/exe")" "the long job's supervisor"
	# The previous version's records have no format: format 0.
	for f in spec.json run.json grant.json; do
		! has_format "$running" "$f" || fail "the previous version wrote a format into $f: not the base this test means"
	done
	! has_format "$ended" result.json || fail "the previous version wrote a format into result.json"

	# The upgrade: this build's bgrund takes over.
	rm -f "$UPGRADE_DROPIN"
	restart_bgrund_as upgraded
	assert_eq "$new_bgrund" "$(readlink "/proc/$(bgrund_pid)/exe")" "bgrund after the upgrade"

	# The running jobs are kept, watched by their old supervisors.
	assert_eq running "$(job_status "$running")" "the long job after the upgrade"
	assert_eq running "$(job_status "$ending")" "the ending job after the upgrade"
	pid_alive "$pid" || fail "the long job's command was killed by the upgrade"
	pid_alive "$sup" || fail "the long job's supervisor was killed by the upgrade"
	local n1 n2
	n1=$(jget "$running" .output_bytes)
	sleep 0.5
	n2=$(jget "$running" .output_bytes)
	((n2 > n1)) || fail "the long job's output stopped growing after the upgrade ($n1 -> $n2)"

	# A job that ends under the new bgrund: its old supervisor writes the
	# result (format 0), the new bgrund reads it.
	local rec
	touch "$go"
	rec=$(bgrun wait "$ending" --json)
	assert_eq 7 "$?" "bgrun wait's exit status for the ending job"
	assert_eq exited "$(jq -r .status <<<"$rec")" "the ending job's status"
	assert_eq 7 "$(jq -r .exit_code <<<"$rec")" "the ending job's exit code"
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" "the ending job's teardown"
	assert_eq late "$(bgrun logs "$ending")" "the ending job's output"
	! has_format "$ending" result.json || fail "the old supervisor's result has a format: it was not the old one"
	wait_until 5 bash -c "! kill -0 $ending_sup 2>/dev/null" || fail "the ending job's supervisor is still there"

	# Kill the long one through the new bgrund.
	local res
	res=$(bgrun kill "$running" --json) || fail "kill after the upgrade"
	assert_eq true "$(jq -r .killed <<<"$res")" "killed after the upgrade"
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" "dead after the upgrade"
	! pid_alive "$pid" || fail "the long job's command survived the kill"
	assert_eq killed "$(job_status "$running")" "the long job's status after the kill"
	wait_until 5 bash -c "! kill -0 $sup 2>/dev/null" || fail "the long job's old supervisor did not exit"

	# The records that ended before the upgrade.
	rec=$(bgrun status "$ended" --json) || fail "the old ended record cannot be read"
	assert_eq exited "$(jq -r .status <<<"$rec")" "old record's status"
	assert_eq 3 "$(jq -r .exit_code <<<"$rec")" "old record's exit code"
	assert_eq 10 "$(jq -r .output_bytes <<<"$rec")" "old record's output size (hello-old and its newline)"
	assert_eq hello-old "$(bgrun logs "$ended")" "old record's output"
	rec=$(bgrun status "$killed" --json) || fail "the old killed record cannot be read"
	assert_eq killed "$(jq -r .status <<<"$rec")" "old killed record's status"
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" "old killed record's teardown"
	bgrun list --json | jq -e --arg id "$ended" '.[] | select(.id == $id)' >/dev/null ||
		fail "the old ended record is not listed"

	# A job of the new version writes format 1.
	local new
	new=$(bgrun run -- 'exit 0') || fail "launch after the upgrade"
	bgrun wait "$new" >/dev/null
	for f in spec.json run.json result.json grant.json; do
		assert_eq 1 "$(jq -r .format "/var/lib/bgrun/jobs/$new/$f")" "format of the new job's $f"
	done

	for id in "$running" "$ending" "$ended" "$killed" "$new"; do
		bgrun forget "$id" || fail "forget $id"
		[[ ! -e /var/lib/bgrun/jobs/$id ]] || fail "$id is still on disk after forget"
	done
}

# A record of a newer format than this bgrund knows (a downgrade) is not
# guessed at but treated as damaged: a running job whose run.json is newer is
# kept, its supervisor found by what it is, never killed for it.
test_newer_format_is_refused_not_misread() {
	local id pid sup
	id=$(bgrun run -- 'sleep 300') || fail "launch failed"
	wait_until 5 test -e "/var/lib/bgrun/jobs/$id/run.json" || fail "no run.json"
	pid=$(jget "$id" .pid)
	sup=$(supervisor_pid "$id")
	# A newer format may mean something else by a key: were it read as
	# format 1, this token would not verify and the job would be released.
	jq -c '.format = 99 | .supervisor_token = "means-something-else"' "/var/lib/bgrun/jobs/$id/run.json" >run.new
	cp run.new "/var/lib/bgrun/jobs/$id/run.json"
	restart_bgrund_as "with a newer run.json"
	pid_alive "$pid" || fail "the job's command was killed for a newer run.json"
	pid_alive "$sup" || fail "the job's supervisor was killed for a newer run.json"
	assert_eq running "$(job_status "$id")" "status with a newer run.json"
	local res
	res=$(bgrun kill "$id" --json) || fail "kill failed"
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	! pid_alive "$pid" || fail "the command survived the kill"
	bgrun forget "$id" || fail "forget failed"
}

# A result.json of a newer format is not read as this format's: the job is
# shown as damaged (failed, its result kept aside), not as it might have ended.
test_newer_result_is_shown_damaged() {
	local id rec
	id=$(bgrun run -- 'exit 0') || fail "launch failed"
	bgrun wait "$id" >/dev/null
	jq -c '.format = 99' "/var/lib/bgrun/jobs/$id/result.json" >result.new
	cp result.new "/var/lib/bgrun/jobs/$id/result.json"
	restart_bgrund_as "with a newer result.json"
	rec=$(bgrun status "$id" --json) || fail "the job cannot be read"
	assert_eq failed "$(jq -r .status <<<"$rec")" "status of a job whose result is of a newer format"
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" "dead"
	cmp -s result.new "/var/lib/bgrun/jobs/$id/result.json.damaged" || fail "the newer result was not kept aside as it was"
	bgrun forget "$id" || fail "forget failed"
}

# This bgrun against the previous bgrund, which knows no LaunchDeadlineUSec:
# run goes on without it, saying so, and the job runs once.
test_a_new_bgrun_runs_on_a_bgrund_without_launch_deadlines() {
	local prev old_bgrund out
	prev=$(previous_prefix)
	old_bgrund=$(find "$prev" -path '*/libexec/bgrund' -type f 2>/dev/null | head -n 1)
	[[ -x $old_bgrund ]] || skip "no previous version built in $prev (tools/build-previous; tools/test builds it)"
	local unitdir
	unitdir=$(systemctl show -p UnitPath --value | awk '{ print $1 }')
	UPGRADE_DROPIN=$unitdir/bgrund.service.d/90-test-upgrade.conf
	mkdir -p "${UPGRADE_DROPIN%/*}"
	printf '%s\n' "[Service]" "ExecStart=" "ExecStart=$old_bgrund" >"$UPGRADE_DROPIN"
	trap 'rm -f "$UPGRADE_DROPIN"; systemctl daemon-reload; systemctl reset-failed bgrund.service; systemctl restart bgrund.service' EXIT
	restart_bgrund_as previous
	if busctl introspect org.bgrun.Runtime1 /org/bgrun/Runtime1 >/dev/null 2>&1 &&
	   out=$(busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager Launch 'sssa{sv}' \
		true dl-probe / 1 LaunchDeadlineUSec t $((($(date +%s) + 60) * 1000000)) 2>&1); then
		skip "the previous bgrund knows LaunchDeadlineUSec already"
	fi
	# (Not run --wait: it binds its job, which the previous bgrund does not know either.)
	local id
	id=$(bgrun run -s old-bgrund -- 'echo ran' 2>err) || fail "run against the previous bgrund: $(cat err)"
	assert_contains "$(cat err)" "does not know LaunchDeadlineUSec"
	wait_until 10 job_has_exited "$id" || fail "the job: $(job_status "$id")"
	assert_eq 1 "$(bgrun list -s old-bgrund --json | jq length)" "one job"
}
