# SPDX-License-Identifier: MIT
# bgrund --user (issue #11): ordinary users, each logged in through
# bgrun-sandbox-login (a real systemd --user with a delegated cgroup and a
# session bus), each with its own bgrund started by bus activation.

# bgrun talking to the caller's own bgrund --user.
ubgrun() { bgrun --user "$@"; }
ujget() { ubgrun status "$1" --json | jq -r "$2"; }

# hold_login USER: USER stays logged in (its manager and bus up) until the
# test ends; in_login calls share that login instead of making their own.
LOGIN_DIR=
hold_login() {
	local user=$1 uid
	ensure_user "$user"
	uid=$(id -u "$user")
	if [[ -z $LOGIN_DIR ]]; then
		LOGIN_DIR=$(mktemp -d /tmp/bgrun-login.XXXXXX)
		chmod 0755 "$LOGIN_DIR"
		trap release_logins EXIT
	fi
	bgrun-sandbox-login "$user" -- bash -c "while [ ! -e '$LOGIN_DIR/done' ]; do sleep 0.1; done" \
		>>"$LOGIN_DIR/log" 2>&1 &
	echo "$!" >>"$LOGIN_DIR/pids"
	wait_until 30 bash -c "[[ -S /run/user/$uid/bus && \$(systemctl is-active user@$uid.service) == active ]]" \
		|| fail "the login of $user did not come up: $(cat "$LOGIN_DIR/log")"
}

release_logins() {
	touch "$LOGIN_DIR/done"
	local p
	for p in $(cat "$LOGIN_DIR/pids"); do wait "$p"; done
	rm -rf "$LOGIN_DIR"
}

# in_login USER BODY: run the bash code BODY as USER, logged in, with the
# helpers of lib.sh and of this file.
in_login() {
	bgrun-sandbox-login "$1" -- bash -c "source '$TESTS_DIR/lib.sh'; source '$TESTS_DIR/test-user.sh'; $2"
}

user_state() { echo "/home/$1/.local/state/bgrun/jobs"; }
manager_cg() { local uid; uid=$(id -u "$1"); echo "/user.slice/user-$uid.slice/user@$uid.service"; }

test_user_job_runs_in_its_users_manager() {
	hold_login alice
	local uid mcg out cg id rec dir
	uid=$(id -u alice)
	mcg=$(manager_cg alice)
	out=$(in_login alice 'ubgrun run --wait -- "cat /proc/self/cgroup; id -u"') || fail "run --wait as alice: $out"
	cg=$(sed -n 's/^0:://p' <<<"$out")
	[[ $cg == "$mcg"/bgrun.slice/bgrun-job-*.scope/payload ]] \
		|| fail "the job's cgroup is not in alice's manager's bgrun.slice: '$cg'"
	assert_eq "$uid" "$(tail -n1 <<<"$out")" "the job's uid"
	id=${cg#*/bgrun-job-}
	id=${id%%.scope*}
	rec=$(in_login alice "ubgrun status $id --json") || fail "status as alice: $rec"
	assert_eq exited "$(jq -r .status <<<"$rec")" status
	assert_eq "$uid" "$(jq -r .owner <<<"$rec")" owner
	assert_eq systemd "$(jq -r .containment.mechanism <<<"$rec")" mechanism
	assert_eq true "$(jq -r .containment.contained <<<"$rec")" contained
	assert_eq "bgrun-job-$id.scope" "$(jq -r .containment.unit <<<"$rec")" unit
	assert_eq "$mcg/bgrun.slice/bgrun-job-$id.scope/payload" "$(jq -r .containment.cgroup <<<"$rec")" "containment.cgroup"
	assert_eq true "$(jq -r .teardown.dead <<<"$rec")" dead
	# The records are the user's, under its XDG state dir; none is the system's.
	dir=$(user_state alice)/$id
	for f in spec.json grant.json run.json result.json; do
		[[ -f $dir/$f ]] || fail "$dir/$f is missing"
		assert_eq alice "$(stat -c %U "$dir/$f")" "owner of $f"
	done
	assert_eq 700 "$(stat -c %a /home/alice/.local/state/bgrun)" "mode of the state dir"
	[[ ! -e /var/lib/bgrun/jobs/$id ]] || fail "the system's state has the user's job"
}

test_user_kill_reaches_escaping_children() {
	hold_login alice
	local id pids p res cg uid
	uid=$(id -u alice)
	# setsid, a double fork and a TERM-ignoring child: each prints its pid.
	id=$(in_login alice "ubgrun run -- 'setsid sleep 301 & echo \"pid \$!\"; (sleep 302 & echo \"pid \$!\"); trap \"\" TERM; (trap \"\" TERM; sleep 303) & echo \"pid \$!\"; echo \"pid \$\$\"; sleep 304'") \
		|| fail "launch as alice: $id"
	wait_until 5 bash -c "[[ \$(grep -c '^pid' '$(user_state alice)/$id/output') == 4 ]]" \
		|| fail "the job did not report its pids"
	pids=$(awk '/^pid/ {print $2}' "$(user_state alice)/$id/output")
	for p in $pids; do
		pid_alive "$p" || fail "pid $p not running before the kill"
		assert_eq "$uid" "$(stat -c %u "/proc/$p")" "uid of pid $p"
	done
	res=$(in_login alice "ubgrun kill $id --json") || fail "kill as alice: $res"
	assert_eq true "$(jq -r .killed <<<"$res")" killed
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" dead
	assert_eq cgroup.kill "$(jq -r .teardown.method <<<"$res")" method
	for p in $pids; do ! pid_alive "$p" || fail "pid $p of the job survived the kill"; done
	assert_eq killed "$(in_login alice "ujget $id .status")" status
	cg=$(in_login alice "ujget $id .containment.cgroup")
	[[ $cg == "$(manager_cg alice)/bgrun.slice/bgrun-job-$id.scope/"* ]] || fail "containment.cgroup: '$cg'"
	[[ -z $(all_procs_below "$CG$cg") ]] || fail "cgroup $cg still has processes: $(all_procs_below "$CG$cg")"
}

test_user_job_survives_a_restart_of_bgrund() {
	hold_login alice
	local id sup before after res out
	id=$(in_login alice "ubgrun run -- 'sleep 1000'") || fail "launch as alice: $id"
	sup=$(jq -r .supervisor_pid "$(user_state alice)/$id/run.json")
	pid_alive "$sup" || fail "no supervisor"
	before=$(in_login alice 'systemctl --user show -P MainPID bgrund.service')
	in_login alice 'systemctl --user restart bgrund.service' || fail "systemctl --user restart bgrund failed"
	after=$(in_login alice 'systemctl --user show -P MainPID bgrund.service')
	assert_ne "$before" "$after" "bgrund's pid after the restart"
	assert_ne 0 "$after" "bgrund's pid after the restart"
	pid_alive "$sup" || fail "the supervisor died with the restart"
	assert_eq running "$(in_login alice "ujget $id .status")" "status after the restart"
	# The user is its instance's admin: Reap verifies the job and keeps it.
	out=$(in_login alice 'ubgrun reap --json') || fail "reap as alice: $out"
	assert_eq 1 "$(jq -r .background_kept <<<"$out")" "background_kept of alice's reap"
	res=$(in_login alice "ubgrun kill $id --json") || fail "kill after the restart: $res"
	assert_eq true "$(jq -r .teardown.dead <<<"$res")" "dead after the restart's kill"
	! pid_alive "$sup" || fail "the supervisor outlived its job"
}

test_user_jobs_are_invisible_to_other_instances() {
	hold_login alice
	hold_login bob
	local id out bobs
	id=$(in_login alice "ubgrun run -- 'sleep 1000'") || fail "launch as alice: $id"
	# bob's own bgrund --user: no such job, nothing in its list.
	in_login bob "ubgrun status $id" >out 2>&1 && fail "bob's instance shows alice's job: $(cat out)"
	assert_contains "$(cat out)" "$id" "bob's status error"
	out=$(in_login bob 'ubgrun list') || fail "bob's list: $out"
	assert_not_contains "$out" "$id" "bob's list"
	bobs=$(in_login bob "ubgrun run -- 'sleep 1000'") || fail "launch as bob: $bobs"
	[[ -d "$CG$(manager_cg bob)/bgrun.slice/bgrun-job-$bobs.scope" ]] || fail "bob's job is not in bob's manager"
	out=$(in_login alice 'ubgrun list') || fail "alice's list: $out"
	assert_contains "$out" "$id" "alice's list"
	assert_not_contains "$out" "$bobs" "alice's list"
	# The system instance: not for root (an admin there), nor for alice.
	expect_fail bgrun status "$id"
	assert_not_contains "$(bgrun list)" "$id" "the system instance's list (root)"
	assert_not_contains "$(as_user alice "$(command -v bgrun)" list)" "$id" "the system instance's list (alice)"
	# The system instance's reap leaves the user instances' jobs alone.
	bgrun reap >/dev/null || fail "the system instance's reap"
	assert_eq running "$(in_login alice "ujget $id .status")" "alice's job after the system's reap"
	assert_eq running "$(in_login bob "ujget $bobs .status")" "bob's job after the system's reap"
	in_login alice "ubgrun kill $id >/dev/null" || fail "alice's kill"
	in_login bob "ubgrun kill $bobs >/dev/null" || fail "bob's kill"
}

test_user_instance_runs_nothing_as_root() {
	hold_login alice
	local uid id p bad= sup procs
	uid=$(id -u alice)
	id=$(in_login alice "ubgrun run -- 'sleep 1000'") || fail "launch as alice: $id"
	sup=$(jq -r .supervisor_pid "$(user_state alice)/$id/run.json")
	procs=$(all_procs_below "$CG$(manager_cg alice)" | tr '\n' ' ')
	[[ -n $procs ]] || fail "nothing runs in alice's manager"
	# Everything of the login: the manager, its bus, bgrund, the supervisor
	# and the job.
	for p in $procs; do
		[[ -e /proc/$p ]] || continue
		[[ $(stat -c %u "/proc/$p") == "$uid" ]] || bad+=" $p($(cat "/proc/$p/comm" 2>/dev/null), uid $(stat -c %u "/proc/$p"))"
	done
	[[ -z $bad ]] || fail "processes of alice's login that are not alice's:$bad"
	assert_contains " $procs " " $sup " "the supervisor in alice's manager"
	out=$(ps -eo uid=,args= | grep -E '[b]grund --user|[b]grun-supervisor --job '"$id")
	[[ -n $out ]] || fail "ps shows no bgrund --user or supervisor"
	while read -r u _; do assert_eq "$uid" "$u" "uid in ps: $out"; done <<<"$out"
	# The supervisor's capability sets are empty, and no_new_privs is set in the job.
	out=$(in_login alice "ubgrun run --wait -- 'grep -E \"^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs)\" /proc/self/status'")
	for cap in CapInh CapPrm CapEff CapAmb; do
		assert_contains "$out" "$(printf '%s:\t0000000000000000' "$cap")" "$cap"
	done
	assert_contains "$out" "$(printf 'NoNewPrivs:\t1')" NoNewPrivs
	in_login alice "ubgrun kill $id >/dev/null" || fail "alice's kill"
}

# The session bus admits only its user; through a bus that admits everyone,
# bgrund --user still serves its user alone, who is also its admin.
test_user_instance_serves_its_user_only() {
	ensure_user bob
	hold_login alice
	local dir bus daemon bgrund out
	dir=$(mktemp -d /tmp/bgrun-open-bus.XXXXXX)
	chmod 0755 "$dir"
	cat >"$dir/bus.conf" <<-EOF
	<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
	 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
	<busconfig>
	  <type>session</type>
	  <listen>unix:path=$dir/bus</listen>
	  <auth>EXTERNAL</auth>
	  <policy context="default">
	    <allow user="*"/>
	    <allow send_destination="*" eavesdrop="true"/>
	    <allow eavesdrop="true"/>
	    <allow own="*"/>
	  </policy>
	</busconfig>
	EOF
	chmod 0777 "$dir"
	bus=unix:path=$dir/bus
	# Both as alice, in her login; killed by pid when the test ends.
	in_login alice "dbus-daemon --config-file='$dir/bus.conf' --nofork --nopidfile >/dev/null 2>&1 & echo \$! >'$dir/daemon.pid'; wait_until 5 test -S '$dir/bus' && chmod 0777 '$dir/bus'" \
		|| fail "no open bus"
	daemon=$(cat "$dir/daemon.pid")
	trap 'kill "$daemon" 2>/dev/null; [[ -n ${bgrund:-} ]] && kill "$bgrund" 2>/dev/null; release_logins; rm -rf "$dir"' EXIT
	in_login alice "BGRUN_BUS_ADDRESS='$bus' $BGRUN_LIBEXECDIR/bgrund --user --state-dir=\$HOME/open-bus-state >'$dir/bgrund.log' 2>&1 & echo \$! >'$dir/bgrund.pid'"
	bgrund=$(cat "$dir/bgrund.pid")
	wait_until 10 as_user alice busctl --address="$bus" status org.bgrun.Runtime1 || fail "bgrund --user never took its name: $(cat "$dir/bgrund.log")"

	# bob reaches it but is refused, whatever he asks.
	out=$(as_user bob env BGRUN_BUS_ADDRESS="$bus" "$(command -v bgrun)" run -- true 2>&1) && fail "bob launched on alice's instance: $out"
	assert_contains "$out" "serves uid $(id -u alice) only" "bob's Launch"
	out=$(as_user bob env BGRUN_BUS_ADDRESS="$bus" "$(command -v bgrun)" list 2>&1) && fail "bob listed alice's instance: $out"
	assert_contains "$out" "serves uid $(id -u alice) only" "bob's ListJobs"
	out=$(as_user bob gdbus call --address "$bus" --dest org.bgrun.Runtime1 --object-path /org/bgrun/Runtime1 \
		--method org.bgrun.Runtime1.Manager.Reap 2>&1) && fail "bob reaped alice's instance: $out"
	assert_contains "$out" org.bgrun.Runtime1.Error.AccessDenied "bob's Reap"
	# alice runs jobs there and is its admin: Reap is hers.
	out=$(in_login alice "BGRUN_BUS_ADDRESS='$bus' bgrun run --wait -- 'echo hello'") || fail "alice's job: $out"
	assert_eq hello "$out" "alice's job's output"
	out=$(in_login alice "BGRUN_BUS_ADDRESS='$bus' bgrun reap --json") || fail "alice's reap: $out"
	assert_eq 0 "$(jq -r .background_kept <<<"$out")" "background_kept"
}

test_user_paths_follow_the_xdg_directories() {
	hold_login alice
	local out
	out=$(in_login alice "$BGRUN_LIBEXECDIR/bgrund --user --check-config") || fail "check-config: $out"
	assert_contains "$out" "# configuration: /home/alice/.config/bgrun/bgrund.conf, /home/alice/.config/bgrun/bgrund.conf.d/*.conf" "defaults"
	assert_contains "$out" "# state: /home/alice/.local/state/bgrun" "default state"
	out=$(in_login alice "XDG_STATE_HOME=/home/alice/st XDG_CONFIG_HOME=/home/alice/cf $BGRUN_LIBEXECDIR/bgrund --user --check-config") \
		|| fail "check-config: $out"
	assert_contains "$out" "# configuration: /home/alice/cf/bgrun/bgrund.conf" "XDG_CONFIG_HOME"
	assert_contains "$out" "# state: /home/alice/st/bgrun" "XDG_STATE_HOME"
	# The user's configuration is the instance's: a drop-in, then a restart.
	in_login alice 'mkdir -p ~/.config/bgrun/bgrund.conf.d && printf "[Runtime]\nContainmentMode=report-only\n" >~/.config/bgrun/bgrund.conf.d/50-test.conf && systemctl --user restart bgrund.service' \
		|| fail "restart with the user's drop-in"
	out=$(in_login alice 'busctl --user get-property org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager ContainmentMode')
	assert_eq 's "report-only"' "$out" "ContainmentMode from the user's drop-in"
}

# The wall-clock limit and Stop: the supervisor, not root, signals the job
# and tears it down.
test_user_timeout_and_stop() {
	hold_login alice
	local rc id out
	in_login alice "ubgrun run --wait -t 1s -- 'sleep 60'" >/dev/null 2>&1
	rc=$?
	assert_eq 124 "$rc" "run --wait's exit status after the 1 s limit"
	id=$(in_login alice "ubgrun run -- 'sleep 1000 & wait'") || fail "launch as alice: $id"
	wait_until 5 test -f "$(user_state alice)/$id/run.json" || fail "the job never ran"
	out=$(in_login alice "busctl --user --json=short call ${MGR[*]} Stop 'sa{sv}' $id 1 GraceUSec t 5000000") \
		|| fail "Stop as alice: $out"
	assert_eq true "$(jq -r '.data[0].teardown.data.dead.data' <<<"$out")" "dead after Stop"
	assert_eq killed "$(in_login alice "ujget $id .status")" "status after Stop"
}

# A job scope in the instance's bgrun.slice that no record accounts for is
# killed when bgrund --user starts; one elsewhere in the manager is not its.
test_user_instance_kills_only_its_own_orphans() {
	hold_login alice
	local mcg
	mcg=$(manager_cg alice)
	in_login alice 'ubgrun list >/dev/null' || fail "alice's instance does not answer"
	in_login alice 'systemd-run --user --quiet --unit=bgrun-job-orphan0001 --slice=bgrun.slice --scope -- sleep 1000 >/dev/null 2>&1 &
		systemd-run --user --quiet --unit=bgrun-job-elsewhere1 --scope -- sleep 1000 >/dev/null 2>&1 &
		wait_until 10 bash -c "systemctl --user is-active bgrun-job-orphan0001.scope && systemctl --user is-active bgrun-job-elsewhere1.scope"' \
		|| fail "the stand-in scopes did not start"
	[[ -n $(all_procs_below "$CG$mcg/bgrun.slice/bgrun-job-orphan0001.scope") ]] || fail "the orphan scope is not in bgrun.slice"
	in_login alice 'systemctl --user restart bgrund.service' || fail "restart"
	wait_until 10 bash -c "[[ -z \$(find '$CG$mcg/bgrun.slice/bgrun-job-orphan0001.scope' -name cgroup.procs -exec cat {} + 2>/dev/null) ]]" \
		|| fail "the orphaned scope in bgrun.slice outlived bgrund's start"
	[[ -n $(all_procs_below "$CG$mcg/app.slice/bgrun-job-elsewhere1.scope") ]] \
		|| fail "bgrund --user killed a scope outside its bgrun.slice"
	in_login alice 'systemctl --user stop bgrun-job-elsewhere1.scope'
}

# RequestId, Argv and WaitOutput on a user's own bgrund (issue #32).
test_user_request_id_argv_and_wait_output() {
	hold_login alice
	local out
	# shellcheck disable=SC2016
	out=$(in_login alice '
		rm -f "$HOME/once"
		a=$(ubgrun run -q --request-id u-$$ -- "echo ran >> \$HOME/once") || exit 1
		b=$(ubgrun run -q --request-id u-$$ -- "echo ran >> \$HOME/once") || exit 1
		ubgrun wait "$a" >/dev/null
		[[ $a == "$b" ]] || { echo "two jobs: $a $b"; exit 1; }
		echo "LINES $(wc -l <"$HOME/once")"
		id=$(ubgrun run -q -- printf "%s|" "a b" "\$HOME") || exit 1
		ubgrun wait "$id" >/dev/null
		echo "OUT $(ubgrun logs "$id")"
		id=$(ubgrun run -q -- sh -c "sleep 1; echo late; sleep 300") || exit 1
		echo "WAITED $(busctl --user --timeout=60 call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager WaitOutput stut "$id" 0 100 30000000)"
		ubgrun kill "$id" >/dev/null
	' 2>&1) || fail "in alice's login: $out"
	assert_contains "$out" "LINES 1" "a second run with the request id ran nothing"
	# shellcheck disable=SC2016
	assert_contains "$out" 'OUT a b|$HOME|' "Argv on the user's instance"
	assert_contains "$out" "WAITED aytb 5 108 97 116 101 10 5 false" "WaitOutput on the user's instance"
}

# The queue on the user's instance (issue #38): two at a time, in order,
# kept across a restart of bgrund --user.
test_user_queue_runs_in_order_across_a_restart() {
	hold_login alice
	local out
	# shellcheck disable=SC2016
	out=$(in_login alice '
		rm -f "$HOME/queue"
		b=$(ubgrun run -q -s q --queue --parallel 1 -- "sleep 300") || exit 1
		ids=()
		for i in 1 2 3 4 5; do ids+=("$(ubgrun run -q -s q --queue --parallel 1 -- "echo $i >> \$HOME/queue")") || exit 1; done
		echo "QUEUED $(ubgrun list -s q --status queued | tail -n +2 | wc -l)"
		echo "PLACE $(ujget "${ids[4]}" .queue_position)"
		systemctl --user restart bgrund.service || exit 1
		echo "AFTER $(ubgrun list -s q --status queued | tail -n +2 | wc -l)"
		ubgrun kill "$b" >/dev/null || exit 1
		ubgrun wait -t 60s "${ids[@]}" >/dev/null
		echo "WROTE $(tr "\n" " " <"$HOME/queue")"
	' 2>&1) || fail "in alice's login: $out"
	assert_contains "$out" "QUEUED 5" "queued jobs on the user's instance"
	assert_contains "$out" "PLACE 5" "the last one's place"
	assert_contains "$out" "AFTER 5" "queued after a restart of bgrund --user"
	assert_contains "$out" "WROTE 1 2 3 4 5 " "what the jobs wrote: each once, in order"
}
