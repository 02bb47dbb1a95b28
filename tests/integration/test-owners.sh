# SPDX-License-Identifier: MIT
# Owners, authority and least privilege (issue #5): two real users, alice
# and bob, made inside the sandbox (its /etc is a private overlay).

# ucall USER METHOD GVARIANT-ARGS...: gdbus call on the Manager as USER.
ucall() {
	local user=$1 method=$2
	shift 2
	as_user "$user" gdbus call --system --dest org.bgrun.Runtime1 --object-path /org/bgrun/Runtime1 \
		--method "org.bgrun.Runtime1.Manager.$method" "$@"
}

alice_job() { # COMMAND: launch as alice in her home, print the id
	as_user alice "$BGRUN" run -C /home/alice -- "$1"
}

test_other_users_see_nothing_of_a_job() {
	setup_users
	id=$(alice_job 'sleep 300') || fail "alice cannot launch"
	assert_eq "$(id -u alice)" "$(jget "$id" .owner)" "owner"
	for call in "Get '$id'" "Kill '$id'" "ReadOutput '$id' 0 100" "OpenOutput '$id'" "Wait '$id' 0" "Forget '$id'"; do
		# shellcheck disable=SC2086
		eval "expect_fail ucall bob $call"
		assert_contains "$ERR_OUT" org.bgrun.Runtime1.Error.NoSuchJob "bob: $call"
	done
	# ... the same answer as for a job that does not exist at all.
	expect_fail ucall bob Get "'zzzzzzzzzz'"
	assert_contains "$ERR_OUT" org.bgrun.Runtime1.Error.NoSuchJob "bob: Get of an unknown id"
	list=$(ucall bob ListJobs "''") || fail "bob's ListJobs failed: $list"
	assert_not_contains "$list" "$id" "bob's ListJobs"
	expect_fail as_user bob busctl get-property org.bgrun.Runtime1 "/org/bgrun/Runtime1/job/$id" org.bgrun.Runtime1.Job status
	tree=$(as_user bob busctl tree org.bgrun.Runtime1 2>&1) || fail "bob's busctl tree failed: $tree"
	assert_contains "$tree" /org/bgrun/Runtime1 "bob's busctl tree"
	assert_not_contains "$tree" "$id" "bob's busctl tree"
	assert_eq running "$(job_status "$id")" "status after bob's attempts"
	# alice sees her own, root sees and kills it.
	assert_contains "$(ucall alice ListJobs "''")" "$id" "alice's ListJobs"
	assert_contains "$(bgrun list)" "$id" "root's list"
	res=$(bgrun kill "$id" --json)
	assert_eq true "$(jq -r .killed <<<"$res")" "root's kill"
}

test_jobs_run_as_their_owner_without_capabilities() {
	setup_users
	id=$(alice_job 'id -u; id -g; id -G; echo HOME=$HOME USER=$USER LOGNAME=$LOGNAME SHELL=$SHELL; grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)" /proc/self/status; touch owned-by-alice')
	bgrun wait "$id" >/dev/null
	out=$(bgrun logs "$id")
	mapfile -t lines <<<"$out"
	assert_eq "$(id -u alice)" "${lines[0]}" uid
	assert_eq "$(id -g alice)" "${lines[1]}" gid
	assert_eq "$(id -G alice)" "${lines[2]}" groups
	assert_contains "$out" "HOME=/home/alice USER=alice LOGNAME=alice SHELL=/bin/bash" environment
	for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
		assert_contains "$out" "$(printf '%s:\t0000000000000000' "$cap")" "$cap"
	done
	assert_contains "$out" "$(printf 'NoNewPrivs:\t1')" NoNewPrivs
	assert_eq alice "$(stat -c %U /home/alice/owned-by-alice)" "owner of a file the job made"
	# root's jobs have no capabilities either.
	id=$(bgrun run -- 'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status')
	bgrun wait "$id" >/dev/null
	assert_eq 3 "$(bgrun logs "$id" | grep -c '0000000000000000')" "root job's empty capability sets"
}

test_only_root_may_choose_the_user() {
	setup_users
	for who in root bob; do
		expect_fail ucall alice Launch "'touch /tmp/alice-as-$who'" "''" "'/'" "{'User': <'$who'>}"
		assert_contains "$ERR_OUT" org.bgrun.Runtime1.Error.AccessDenied "alice asking for User=$who"
	done
	sleep 0.3
	[[ ! -e /tmp/alice-as-root && ! -e /tmp/alice-as-bob ]] || fail "a refused job ran"
	out=$(gcall Launch "'id -un'" "''" "'/'" "{'User': <'bob'>}") || fail "root cannot choose User=bob"
	id=$(sed -E "s/^\('([a-z0-9]+)'.*/\1/" <<<"$out")
	bgrun wait "$id" >/dev/null
	assert_eq bob "$(bgrun logs "$id")" "User=bob chosen by root"
	assert_eq 0 "$(jget "$id" .owner)" "owner stays root"
}

test_state_is_private() {
	assert_eq 700 "$(stat -c %a /var/lib/bgrun)" "state directory mode"
	id=$(bgrun run -- 'echo secret')
	bgrun wait "$id" >/dev/null
	assert_eq 600 "$(stat -c %a /var/lib/bgrun/jobs/$id/output)" "output file mode"
}

test_hostile_ids_touch_no_file() {
	setup_users
	sum_before=$(md5sum /etc/passwd)
	for id in '../../etc/passwd' '../jobs' 'a/b' '.' '..' "$(printf 'x\tz')"; do
		for m in Get Kill Forget OpenOutput; do
			expect_fail ucall alice $m "'$id'"
			assert_contains "$ERR_OUT" org.bgrun.Runtime1.Error.NoSuchJob "$m '$id'"
		done
	done
	assert_eq "$sum_before" "$(md5sum /etc/passwd)" "/etc/passwd"
}

test_polkit_rule_makes_a_group_member_admin() {
	command -v /usr/lib/polkit-1/polkitd >/dev/null || fail "polkitd is missing (tools/install-deps installs it)"
	setup_users
	getent group bgrun-admins >/dev/null || groupadd bgrun-admins
	usermod -aG bgrun-admins bob
	rules=/etc/polkit-1/rules.d/50-bgrun-test.rules
	trap 'rm -f '"$rules"'; systemctl restart polkit.service' EXIT
	rm -f "$rules"
	systemctl restart polkit.service || fail "the sandbox's polkit.service does not start"
	id=$(alice_job 'sleep 300')
	# Without a rule bob is no admin.
	list=$(ucall bob ListJobs "''") || fail "bob's ListJobs failed: $list"
	assert_not_contains "$list" "$id" "bob's list without the rule"
	expect_fail ucall bob Kill "'$id'"
	assert_contains "$ERR_OUT" NoSuchJob "bob's kill without the rule"
	expect_fail ucall bob Reap
	assert_contains "$ERR_OUT" AccessDenied "bob's Reap without the rule"
	# With it he is.
	cat >"$rules" <<-'RULES'
	polkit.addRule(function(action, subject) {
		if (action.id == "org.bgrun.manage-any" && subject.isInGroup("bgrun-admins"))
			return polkit.Result.YES;
	});
	RULES
	chmod 644 "$rules"
	systemctl restart polkit.service
	assert_contains "$(ucall bob ListJobs "''")" "$id" "bob's list with the rule"
	out=$(ucall bob Kill "'$id'") || fail "bob's kill with the rule failed: $out"
	assert_contains "$out" "'killed': <true>" "bob's kill with the rule"
	assert_eq killed "$(job_status "$id")" "status after bob's kill"
	# alice is not in the group: still no admin.
	bid=$(as_user bob "$BGRUN" run -C /home/bob -- 'sleep 300') || fail "bob's launch failed"
	list=$(ucall alice ListJobs "''") || fail "alice's ListJobs failed: $list"
	assert_not_contains "$list" "$bid" "alice's list"
	expect_fail ucall alice Kill "'$bid'"
	assert_contains "$ERR_OUT" NoSuchJob "alice's kill of bob's job"
	bgrun kill "$bid" >/dev/null
}

test_garbage_calls_from_an_ordinary_user_cannot_hurt_bgrund() {
	setup_users
	keep=$(bgrun run -- 'sleep 300')
	pid=$(bgrund_pid)
	B=(busctl --system call "${MGR[@]}")
	calls=(
		"Launch s x" "Launch sssa{sv} '' '' '' 0" "Launch sssa{sv} x y / 1 '' s ''"
		"Launch sssa{sv} true '' / 1 Environment as 3 = == ="
		"Launch sssa{sv} true '' / 1 MemoryMax t 0" "Launch sssa{sv} true '' / 1 TasksMax s many"
		"Launch sssa{sv} true '' /proc/self/fd 0" "Launch sssa{sv} true '' //// 0"
		"Get s ''" "Get u 5" "Get" "ListJobs s ../.." "ListJobs" "Kill s $keep" "Kill s ''"
		"ReadOutput stu $keep 18446744073709551615 4294967295" "ReadOutput stu zzzzzzzzzz 0 0"
		"OpenOutput s ''" "Wait st $keep 18446744073709551615x" "Wait st zzzzzzzzzz 1"
		"Forget s $keep" "Reap" "Reap s x" "NoSuchMethod" "Launch sssa{sv} $(printf 'x%.0s' {1..300}) '' / 0"
	)
	for i in 1 2 3; do
		for c in "${calls[@]}"; do
			eval "as_user bob timeout 5 ${B[*]} $c" >/dev/null 2>&1
		done
	done
	for m in Launch Get ListJobs Kill ReadOutput OpenOutput Wait Forget Reap; do
		as_user bob timeout 5 gdbus call --system --dest org.bgrun.Runtime1 --object-path /org/bgrun/Runtime1 \
			--method "org.bgrun.Runtime1.Manager.$m" "'$(head -c 200 /dev/urandom | tr -dc 'a-zA-Z0-9/._-' | head -c 60)'" >/dev/null 2>&1
	done
	assert_eq "$pid" "$(bgrund_pid)" "bgrund pid after garbage calls"
	assert_eq running "$(job_status "$keep")" "root's job after bob's garbage"
	busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.freedesktop.DBus.Peer Ping || fail "bgrund does not answer"
	bgrun kill "$keep" >/dev/null
}

# polkit_pause: polkitd (started if need be) stopped, so every question
# bgrund asks it stays in flight; polkit_resume lets it answer. It is let go
# when the test ends, however it ends.
polkit_pause() {
	if [[ -z ${POLKIT_PID:-} ]]; then
		systemctl start polkit.service || fail "the sandbox's polkit.service does not start"
		POLKIT_PID=$(systemctl show -P MainPID polkit.service)
		[[ $POLKIT_PID -gt 0 ]] || fail "polkitd has no pid"
		trap 'kill -CONT '"$POLKIT_PID"'' EXIT
	fi
	kill -STOP "$POLKIT_PID"
}

polkit_resume() { kill -CONT "$POLKIT_PID"; }

test_a_flood_of_calls_that_need_polkit_holds_a_bounded_number() {
	setup_users
	id=$(alice_job 'sleep 300') || fail "alice cannot launch"
	polkit_pause
	out=$(as_user bob /usr/bin/python3 "$CLIENTS_DIR/polkit-flood.py" "$id" 100 5) || fail "the flood failed: $out"
	polkit_resume
	# Past 32 in flight for bob, bgrund asks polkit no more: those calls
	# are answered at once, as for any caller who is no admin.
	answered=$(jq -r .answered <<<"$out")
	assert_eq 68 "$answered" "calls answered while polkit could not answer: $out"
	assert_eq '["org.bgrun.Runtime1.Error.NoSuchJob"]' "$(jq -c .errors <<<"$out")" "their answer"
	# The 32 held ones are answered once polkit is back, and bgrund serves on.
	assert_eq running "$(job_status "$id")" "alice's job"
	bgrun kill "$id" >/dev/null || fail "kill failed"
}

# Whether bgrund asks polkit must not depend on other owners' jobs, or its
# delay tells bob what alice has: with polkitd stopped, bob's Get of an id
# that does not exist waits like one of alice's would, and so does his
# ListJobs of a session name she does not use.
test_polkit_is_asked_whether_the_job_or_session_exists_or_not() {
	setup_users
	id=$(as_user alice "$BGRUN" run -C /home/alice -s secretproj -- 'sleep 300') || fail "alice cannot launch"
	polkit_pause
	local nosuch=zzzzzzzzzz
	[[ $id != "$nosuch" ]] || nosuch=yyyyyyyyyy
	out=$(as_user bob /usr/bin/python3 "$CLIENTS_DIR/polkit-flood.py" "$nosuch" 1 2) || fail "bob's Get failed: $out"
	assert_eq 0 "$(jq -r .answered <<<"$out")" "bob's Get of an id that does not exist, answered while polkit cannot"
	out=$(as_user bob env FLOOD_METHOD=ListJobs /usr/bin/python3 "$CLIENTS_DIR/polkit-flood.py" nosuchsession 1 2) ||
		fail "bob's ListJobs failed: $out"
	assert_eq 0 "$(jq -r .answered <<<"$out")" "bob's ListJobs of a session no one has, answered while polkit cannot"
	polkit_resume
	# Once polkit answers, both are answered as before: nothing of alice's.
	expect_fail as_user bob "$BGRUN" status "$nosuch"
	assert_eq "" "$(as_user bob "$BGRUN" list -s secretproj 2>/dev/null | grep -F "$id")" "bob's listing of alice's session"
	bgrun kill "$id" >/dev/null || fail "kill failed"
}

# An answer from polkit is dropped once its call was dispatched again, also
# when the handler no longer asks for it. A listing asks polkit only while
# someone else has a job: bob's ListJobs are held while polkit cannot
# answer and alice's one job is there; meanwhile it is forgotten, so each
# comes back to a listing that needs no answer. Were those answers kept,
# they would fill bob's 32 slots for good: a later flood would find no
# slot, and be answered at once, all 100, where 32 must be held.
test_polkit_answers_no_handler_asks_for_are_not_kept() {
	setup_users
	# No job of anyone's but the one of alice's below.
	local other
	for other in $(bgrun list --json | jq -r '.[].id'); do
		bgrun kill "$other" >/dev/null 2>&1
		bgrun forget "$other" >/dev/null || fail "cannot forget job $other"
	done
	id=$(alice_job 'true') || fail "alice cannot launch"
	as_user alice "$BGRUN" wait "$id" >/dev/null
	polkit_pause
	local marks flood
	marks=$(mktemp -d) && chown bob "$marks" || fail "no directory for bob's mark"
	as_user bob env FLOOD_METHOD=ListJobs /usr/bin/python3 "$CLIENTS_DIR/polkit-flood.py" "" 32 10 "$marks/held" >flood.out &
	flood=$!
	wait_until 10 test -e "$marks/held" || fail "bgrund did not handle bob's 32 ListJobs"
	rm -rf "$marks"
	as_user alice "$BGRUN" forget "$id" >/dev/null || fail "alice cannot forget her job"
	polkit_resume
	wait "$flood" || fail "the first flood failed: $(cat flood.out)"
	assert_eq 32 "$(jq -r .answered flood.out)" "ListJobs answered once polkit was back: $(cat flood.out)"
	assert_eq '[]' "$(jq -c .errors flood.out)" "their answer"
	# The same flood as above: 32 held, 68 answered at once.
	id=$(alice_job 'sleep 300') || fail "alice cannot launch"
	polkit_pause
	out=$(as_user bob /usr/bin/python3 "$CLIENTS_DIR/polkit-flood.py" "$id" 100 5) || fail "the flood failed: $out"
	polkit_resume
	assert_eq 68 "$(jq -r .answered <<<"$out")" "calls answered while polkit could not answer: $out"
	bgrun kill "$id" >/dev/null || fail "kill failed"
}
