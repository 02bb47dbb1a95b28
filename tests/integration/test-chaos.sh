# SPDX-License-Identifier: MIT
# Chaos: bgrund is killed with SIGKILL while launches from two users are in
# flight, round after round; once everything settled, every job must have
# exactly one consistent, final record, no grant may stay open, no job scope
# may be left without a record or with a process in it, and nothing may be
# reported running.
#
# Short form (CI): 3 rounds of 20 concurrent launches. Long form:
#   BGRUN_CHAOS_ROUNDS=20 BGRUN_CHAOS_LAUNCHES=50 tools/test tests/integration/test-chaos.sh
# or tools/chaos [ROUNDS [LAUNCHES]].

CHAOS_ROUNDS=${BGRUN_CHAOS_ROUNDS:-3}
CHAOS_LAUNCHES=${BGRUN_CHAOS_LAUNCHES:-20}
JOBS_DIR=/var/lib/bgrun/jobs

# The mix of commands; launch I runs CHAOS_COMMANDS[I % 5], as alice when I
# is even and as bob when odd. The escapee's shell ends at once, so its
# supervisor kills what it left behind; the sleepers are killed at the end.
CHAOS_COMMANDS=('true' 'sleep 0.5' 'exit 3' 'setsid sleep 30 & echo escaped' 'sleep 30')
# The exit code each must have if it ended on its own ("exited").
CHAOS_EXIT_CODES=(0 0 3 0 0)
CHAOS_SLEEPER=4

CHAOS_USERS=(alice bob)

# chaos_launch ROUND I: one `bgrun run` as its user; leaves F.id (stdout),
# F.err and F.rc. A launch that hangs is cut off (rc 124) and reported.
chaos_launch() {
	local f=$CHAOS_DIR/$1.$2
	as_user "${CHAOS_USERS[$2 % 2]}" timeout 60 "$BGRUN" run -C / -s "chaos-$1" -- "${CHAOS_COMMANDS[$2 % 5]}" \
		>"$f.id" 2>"$f.err"
	echo $? >"$f.rc"
}

# How many launches of ROUND have printed their id.
chaos_printed() { find "$CHAOS_DIR" -name "$1.*.id" -size +0 | wc -l; }
chaos_printed_at_least() { (($(chaos_printed "$1") >= $2)); }

bgrund_replaced() { # OLD-PID: a new bgrund is active
	local pid
	pid=$(systemctl show -P MainPID bgrund.service)
	[[ $pid != 0 && $pid != "$1" ]] && systemctl is-active -q bgrund.service
}

bgrund_answers() {
	busctl call org.bgrun.Runtime1 /org/bgrun/Runtime1 org.freedesktop.DBus.Peer Ping
}

# The user that owns job ID by its spec (for jobs whose launch printed no id).
owner_of_record() {
	local uid
	uid=$(jq -r .owner "$JOBS_DIR/$1/spec.json" 2>/dev/null) || return 1
	id -nu "$uid" 2>/dev/null
}

running_listed() { # USER: the ids USER's list reports running (fails if list does)
	local out
	out=$(as_user "$1" "$BGRUN" list --json) || return 1
	jq -er '.[] | select(.status == "running") | .id' <<<"$out" || [[ $(jq -r type <<<"$out") == array ]]
}

# Whether job ID (of this test) runs a sleeper, by the launch that printed
# it or else by its spec.
is_sleeper() {
	if [[ -n ${index[$1]:-} ]]; then
		((index[$1] % 5 == CHAOS_SLEEPER))
	else
		[[ $(jq -r .command "$JOBS_DIR/$1/spec.json") == "${CHAOS_COMMANDS[CHAOS_SLEEPER]}" ]]
	fi
}

# Only sleepers are still running (the rest ends within a second).
only_sleepers_running() {
	local user id ids
	for user in alice bob; do
		ids=$(running_listed "$user") || return 1
		for id in $ids; do
			[[ -z ${owner[$id]:-} ]] || is_sleeper "$id" || return 1
		done
	done
}

# problem ID WHAT: an inconsistency, collected so that the test reports every
# one of them (with the job's files) before it fails.
problem() {
	problems+=("job $1: $2")
	[[ $1 == - || -n ${dumped[$1]:-} ]] && return
	dumped[$1]=1
	dumps+=("$(job_dump "$1")")
}

job_dump() { # ID: the job's record files, one line each
	local f
	for f in spec run result grant; do
		[[ -f $JOBS_DIR/$1/$f.json ]] && echo "    $1/$f.json: $(jq -c . "$JOBS_DIR/$1/$f.json" 2>&1 | cut -c1-600)"
	done
	ls -A "$JOBS_DIR/$1" >/dev/null 2>&1 || echo "    $1: no directory"
}

ms_since() { echo $(((${EPOCHREALTIME/./} - ${1/./}) / 1000)); }

# Every bgrun-job-*.scope cgroup, wherever its slice is (bgrun.slice, or a
# per-user slice below user.slice).
job_scopes() { find "$CG" -type d -name 'bgrun-job-*.scope' 2>/dev/null; }

scope_settled() { # DIR: gone, or empty of processes
	[[ -z $(all_procs_below "$1") ]]
}

test_chaos_kill_bgrund_during_launches() {
	local t_start=$EPOCHREALTIME
	ensure_user alice
	ensure_user bob
	BGRUN=$(command -v bgrun)
	CHAOS_DIR=$PWD/chaos
	mkdir -p "$CHAOS_DIR"
	local before kills=0 restarts=0 by_hand=0 round i old threshold pids
	local problems=() dumps=()
	local -A dumped=()
	# Jobs of earlier tests are theirs; this test judges the ones it made.
	before=$(ls "$JOBS_DIR" 2>/dev/null | sort)

	local t_round rounds_ms= t_collect setup_ms collect_ms
	setup_ms=$(ms_since "$t_start")
	for ((round = 1; round <= CHAOS_ROUNDS; round++)); do
		t_round=$EPOCHREALTIME
		systemctl reset-failed bgrund.service # the start limit counts earlier restarts
		wait_until 10 bgrund_answers || fail "round $round: bgrund does not answer before the round"
		old=$(bgrund_pid)
		pids=()
		for ((i = 0; i < CHAOS_LAUNCHES; i++)); do
			chaos_launch "$round" "$i" &
			pids+=($!)
		done
		# Kill at a different point each round: before any launch
		# answered, after a quarter, after half.
		threshold=$(((round - 1) % 3 * CHAOS_LAUNCHES / 4))
		wait_until 20 chaos_printed_at_least "$round" "$threshold" ||
			echo "round $round: only $(chaos_printed "$round") of $threshold launches answered before the kill"
		kill -9 "$old" || fail "round $round: cannot kill bgrund ($old)"
		kills=$((kills + 1))
		wait "${pids[@]}"
		# Restart=on-failure brings it back, unless the start limit hit.
		if wait_until 15 bgrund_replaced "$old"; then
			restarts=$((restarts + 1))
		else
			echo "round $round: bgrund not back by itself: $(systemctl is-active bgrund.service)"
			systemctl reset-failed bgrund.service
			systemctl start bgrund.service || fail "round $round: bgrund does not start"
			by_hand=$((by_hand + 1))
		fi
		rounds_ms+="${rounds_ms:+/}$(ms_since "$t_round")"
	done
	wait_until 10 bgrund_answers || fail "bgrund does not answer after the last round"

	# --- what the launches said ---------------------------------------
	t_collect=$EPOCHREALTIME
	local -A owner=() index=()
	local printed=0 refused=0 f rc out n id user
	for f in "$CHAOS_DIR"/*.rc; do
		f=${f%.rc}
		read -r rc <"$f.rc"
		out=
		read -r out <"$f.id"
		n=${f##*.}
		if ((rc == 124)); then
			problem - "launch ${f##*/} hung for 60 s: $(cat "$f.err")"
			refused=$((refused + 1))
		elif ((rc == 0)); then
			[[ $out =~ ^[a-z0-9]{10}$ ]] || fail "launch ${f##*/} succeeded without an id: '$out'"
			[[ -z ${owner[$out]:-} ]] || fail "job id $out printed twice"
			owner[$out]=${CHAOS_USERS[n % 2]}
			index[$out]=$n
			printed=$((printed + 1))
		else
			[[ -z $out ]] || fail "launch ${f##*/} failed (exit $rc) but printed '$out'"
			[[ -s $f.err ]] || fail "launch ${f##*/} failed (exit $rc) without a message"
			refused=$((refused + 1))
		fi
	done
	((printed + refused == CHAOS_ROUNDS * CHAOS_LAUNCHES)) ||
		fail "$((printed + refused)) of $((CHAOS_ROUNDS * CHAOS_LAUNCHES)) launches reported back"

	# Every job id printed has a record; jobs made by a launch that then
	# failed are found in the store.
	local new_dirs unprinted=0
	new_dirs=$(comm -13 <(echo "$before") <(ls "$JOBS_DIR" | sort))
	for id in "${!owner[@]}"; do
		[[ -f $JOBS_DIR/$id/spec.json ]] && continue
		problem "$id" "printed by its launch but it has no record ($(ls -A "$JOBS_DIR/$id" 2>&1 | tr '\n' ' '))"
		unset "owner[$id]"
	done
	for id in $new_dirs; do
		[[ -n ${owner[$id]:-} ]] && continue
		unprinted=$((unprinted + 1))
		if user=$(owner_of_record "$id"); then
			owner[$id]=$user
		else
			problem "$id" "in the store without a readable spec"
		fi
	done

	collect_ms=$(ms_since "$t_collect")

	# --- settle: the short jobs end on their own, the sleepers are killed --
	t_settle=$EPOCHREALTIME
	local killed=0 st
	if ! wait_until 20 only_sleepers_running; then
		for user in alice bob; do
			out=$(running_listed "$user") || fail "$user's list failed"
			for id in $out; do
				[[ -z ${owner[$id]:-} ]] || is_sleeper "$id" ||
					fail "job $id ($(jq -r .command "$JOBS_DIR/$id/spec.json")) of $user still running 20 s after the last round"
			done
		done
	fi
	short_ms=$(ms_since "$t_settle")
	t_kill=$EPOCHREALTIME
	# All at once: each Kill answers once its job's teardown is confirmed.
	local -A killers=()
	for user in alice bob; do
		out=$(running_listed "$user") || fail "$user's list failed"
		for id in $out; do
			[[ -n ${owner[$id]:-} ]] || continue # not this test's
			as_user "$user" "$BGRUN" kill "$id" >"$CHAOS_DIR/kill.$id" 2>&1 &
			killers[$id]=$!
		done
	done
	for id in "${!killers[@]}"; do
		wait "${killers[$id]}" || fail "${owner[$id]} cannot kill job $id: $(cat "$CHAOS_DIR/kill.$id")"
		killed=$((killed + 1))
	done
	kill_ms=$(ms_since "$t_kill")
	t_check=$EPOCHREALTIME

	# --- the checks -----------------------------------------------------
	# Each record as its owner reads it: one line per job (fields split by
	# US, which unlike a tab keeps empty fields), from one batch of
	# `bgrun status --json` per user (a process or two per job, not five).
	local -A statuses=() statuses_of=() seen=()
	local err started finished dead code uid rec_owner failed_printed=0
	for user in alice bob; do
		local ids=()
		for id in "${!owner[@]}"; do [[ ${owner[$id]} == "$user" ]] && ids+=("$id"); done
		((${#ids[@]})) || continue
		uid=$(id -u "$user")
		while IFS=$'\x1f' read -r id err st dead started finished code rec_owner; do
			seen[$id]=1
			[[ -z $err ]] || fail "$user cannot read job $id: $err"
			[[ $rec_owner == "$uid" ]] || problem "$id" "owner $rec_owner, launched by $user ($uid)"
			case $st in
			exited | killed | timed_out | failed) ;;
			*) problem "$id" "status '$st' after everything settled" ;;
			esac
			statuses[$st]=$((${statuses[$st]:-0} + 1))
			statuses_of[$id]=$st
			[[ $dead == true ]] || problem "$id" "$st, but teardown.dead is $dead"
			if [[ ! $started =~ ^[0-9]+$ || ! $finished =~ ^[0-9]+$ ]]; then
				problem "$id" "started_at '$started', finished_at '$finished'"
			elif ((started > 0 && finished < started)); then
				problem "$id" "finished_at $finished before started_at $started"
			fi
			if [[ -n ${index[$id]:-} ]]; then
				# What ended on its own ended as its command says.
				if [[ $st == exited && $code != "${CHAOS_EXIT_CODES[index[$id] % 5]}" ]]; then
					problem "$id" "exit code $code of '${CHAOS_COMMANDS[index[$id] % 5]}'"
				fi
				# Launch answered only once the job ran, and a job needs no
				# bgrund to finish (nobody kills a supervisor here): its end
				# is its own, never "failed".
				if [[ $st == failed ]]; then
					failed_printed=$((failed_printed + 1))
					problem "$id" "printed by its launch, so it ran, but recorded failed: $(jq -r .reason "$JOBS_DIR/$id/result.json")"
				fi
			fi
			# The record on disk says the same: there is a result, and what
			# ran had a grant (whether it is still open is checked below).
			[[ -f $JOBS_DIR/$id/result.json ]] || problem "$id" "$st, but no result.json"
			((started == 0)) || [[ -f $JOBS_DIR/$id/grant.json ]] || problem "$id" "ran without a grant"
		done < <(as_user "$user" bash -c 'for id; do
				if r=$("$0" status "$id" --json 2>&1); then printf "%s\n" "$r"
				else jq -cn --arg id "$id" --arg e "$r" "{id: \$id, error: \$e}"; fi
			done' "$BGRUN" "${ids[@]}" |
			jq -r '[.id, .error // "", .status, .teardown.dead, .started_at, .finished_at, .exit_code, .owner] |
				map(tostring) | join("\u001f")')
	done
	for id in "${!owner[@]}"; do
		[[ -n ${seen[$id]:-} ]] || fail "no record read for job $id of ${owner[$id]}"
	done
	check_ms=$(ms_since "$t_check")
	t_final=$EPOCHREALTIME
	# No open grant, of any job this test made.
	local grants=() open
	for id in $new_dirs; do
		[[ -f $JOBS_DIR/$id/grant.json ]] && grants+=("$JOBS_DIR/$id/grant.json")
	done
	if ((${#grants[@]})); then
		open=$(grep -l '"state":"open"' "${grants[@]}")
		for f in $open; do
			id=${f%/grant.json}
			problem "${id##*/}" "its grant is still open"
		done
	fi

	# No job scope without a record, none with a process left.
	local scope scopes=()
	for scope in $(job_scopes); do
		id=${scope##*/bgrun-job-}
		id=${id%.scope}
		grep -qxF "$id" <<<"$before" && continue # an earlier test's job
		wait_until 10 scope_settled "$scope" ||
			problem "$id" "its scope $scope still holds processes: $(all_procs_below "$scope" | tr '\n' ' ')"
		[[ ! -d $scope || -f $JOBS_DIR/$id/spec.json ]] || problem "$id" "its scope $scope has no record"
		[[ -d $scope ]] && scopes+=("$id:${statuses_of[$id]:-?}")
	done
	# Nothing of alice's or bob's is alive: they run nothing but these jobs.
	wait_until 10 bash -c '! pgrep -u alice,bob >/dev/null' ||
		problem - "processes of alice or bob survived: $(pgrep -a -u alice,bob | head -5)"
	for user in alice bob; do
		out=$(running_listed "$user") || fail "$user's list failed"
		for id in $out; do problem "$id" "$user's list reports it running"; done
	done

	local summary=
	for st in "${!statuses[@]}"; do summary+=" $st=${statuses[$st]}"; done
	# The figures, also when the test fails (then before the problems).
	local note="NOTE: chaos: $CHAOS_ROUNDS rounds x $CHAOS_LAUNCHES launches; $printed ids printed, $refused launches failed, $unprinted more jobs in the store; ${#owner[@]} jobs:$summary ($failed_printed of them failed after their id was printed); $killed sleepers killed at the end; bgrund SIGKILLed $kills times, restarted $restarts times by systemd, $by_hand by hand; ${#scopes[@]} job scopes still there${scopes:+ (${scopes[*]})}; ms: setup $setup_ms, rounds $rounds_ms, reading the launches $collect_ms, waiting for the short jobs $short_ms, kills $kill_ms, records $check_ms, grants/scopes/processes/lists $(ms_since "$t_final"), in all $(ms_since "$t_start")"
	if ((${#problems[@]})); then
		echo "    figures: ${note#NOTE: chaos: }" >&2
		# run.sh shows the last 40 lines: the first problems and jobs.
		printf '    %s\n' "${problems[@]:0:15}" >&2
		((${#problems[@]} <= 15)) || echo "    ... and $((${#problems[@]} - 15)) more" >&2
		printf '%s\n' "${dumps[@]:0:4}" >&2
		fail "${#problems[@]} inconsistencies in ${#dumps[@]} of ${#owner[@]} jobs"
	fi

	echo "$note"
}
