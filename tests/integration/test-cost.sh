# SPDX-License-Identifier: MIT
# The cost test, generated from the API itself (issue #20): for every method
# bgrund's objects list (busctl introspect: the manager, a job object, and
# on a --listen socket its bus-daemon object too) and every Launch option of
# include/bgrun/launch-options.h, the most expensive input a caller can send
# within 4 MiB and the bus's limits (cost.py: the longest strings and arrays
# of the right and the wrong type, 64 nested variants, 32 arrays in 32
# structs, wrong types, unknown and repeated keys, 16 descriptors), sent
# as alice while bob pings bgrund every 10 ms. It holds when bob's worst
# Ping stays under 100 ms, bgrund's VmRSS under 64 MiB, bgrund is the same
# process (MainPID, NRestarts), and every hostile call got an error reply
# (a call that is well typed, such as a long string or descriptors attached
# to a valid call, may get a reply). A method or option the table of inputs
# lacks fails it. Here each input goes once; tools/cost runs the full form:
#   BGRUN_COST_REPEAT=N        each input N times (default 1)
#   BGRUN_COST_CONNECTIONS=N   from N connections at once (default 1)
#   BGRUN_COST_DEADLINE=SEC    what is not sent by then fails (default 45)
#   BGRUN_COST_ONLY=REGEX      only the inputs whose label matches (all are
#                              still generated, and the table still checked)

PY=/usr/bin/python3
COST=$TESTS_DIR/cost.py
PING_WORST_MS=100
RSS_MAX_KB=$((64 * 1024))
REPEAT=${BGRUN_COST_REPEAT:-1}
CONNECTIONS=${BGRUN_COST_CONNECTIONS:-1}
DEADLINE=${BGRUN_COST_DEADLINE:-45}
ONLY=${BGRUN_COST_ONLY:-}

ping_start() { # ADDRESS: bob pings bgrund there every 10 ms from now
	# setpriv execs the pinger: $! is its pid.
	setpriv --reuid=bob --regid=bob --init-groups --reset-env -- "$PY" "$COST" ping "$1" >ping.out 2>&1 &
	PING_PID=$!
	on_exit "kill $PING_PID 2>/dev/null"
	wait_until 10 grep -q pinging ping.out || fail "bob's pinger did not start: $(cat ping.out)"
}

ping_stop() { # sets PING (its JSON line) and PING_WORST (ms)
	kill -TERM "$PING_PID"
	wait "$PING_PID"
	PING=$(tail -1 ping.out)
	PING_WORST=$(jq -r '.worst_ms | floor' <<<"$PING") || fail "bob's pinger said: $(cat ping.out)"
	[[ $(jq -r '.errors | length' <<<"$PING") == 0 ]] || fail "bob's Pings failed: $PING"
	(($(jq -r .pings <<<"$PING") > 0)) || fail "bob's pinger sent nothing: $PING"
}

# cost UNIT ADDRESS [--listen ADDRESS]: the inputs as alice against bgrund
# of UNIT while bob pings it at ADDRESS, then every check.
cost() {
	local unit=$1 ping_address=$2 pid restarts out summary rc job
	shift 2
	job=$(as_user alice "$BGRUN" run -C /home/alice -s cost -- 'sleep 300') || fail "alice cannot launch"
	on_exit "bgrun kill $job >/dev/null 2>&1"
	pid=$(systemctl show -p MainPID --value "$unit")
	restarts=$(systemctl show -p NRestarts --value "$unit")
	ping_start "$ping_address"
	out=$(as_user alice "$PY" "$COST" run "$@" --rss-pid "$pid" --repeat "$REPEAT" \
		--connections "$CONNECTIONS" --deadline "$DEADLINE" ${ONLY:+--only "$ONLY"} "$job" 2>&1)
	rc=$?
	ping_stop
	summary=$(tail -1 <<<"$out")
	jq -e .inputs <<<"$summary" >/dev/null 2>&1 || fail "cost.py failed (exit $rc): ${out: -2000}"
	echo "NOTE: $(jq -r '"\(.methods) methods, \(.options) options, \(.inputs) inputs, \(.calls) calls in \(.seconds) s; slowest \(.slowest.ms) ms (\(.slowest.input)); bgrund VmRSS at most \(.rss_max_kb) kB"' <<<"$summary"); bob's worst Ping ${PING_WORST} ms (the bus daemon's own: $(jq -r '.bus_worst_ms // "-"' <<<"$PING") ms)"
	[[ $(jq -r '.uncovered | length' <<<"$summary") == 0 ]] ||
		fail "the table of inputs lacks: $(jq -r '.uncovered | join("; ")' <<<"$summary")"
	(($(jq -r .methods <<<"$summary") > 0 && $(jq -r .options <<<"$summary") > 0)) ||
		fail "no method or no option was found: $summary"
	[[ $(jq -r .without_error_reply <<<"$summary") == 0 ]] ||
		fail "$(jq -r .without_error_reply <<<"$summary") hostile calls got no error reply ($(jq -c .what_they_got <<<"$summary")); the first (at most 20):
$(head -n 20 <<<"$out" | cut -c1-400)"
	((rc == 0)) || fail "cost.py exited $rc: ${out: -1000}"
	local rss
	rss=$(jq -r .rss_max_kb <<<"$summary")
	((rss > 0)) || fail "bgrund's VmRSS was not read: $summary"
	# An AddressSanitizer build (tools/test --sanitize) keeps shadow memory
	# and a quarantine, and runs several times slower: its RSS and its
	# delays are not the ones these bound. There the test asks for what the
	# issue asks of it: no crash (any report fails tools/test) and no restart.
	if [[ -z ${BGRUN_SANITIZER_LOG_DIR:-} ]]; then
		assert_le "$rss" $((RSS_MAX_KB - 1)) "bgrund's largest VmRSS (kB) during the inputs"
		assert_le "$PING_WORST" $((PING_WORST_MS - 1)) "bob's worst Ping (ms) during the inputs ($PING)"
	else
		echo "NOTE: an AddressSanitizer build: bob's worst Ping ($PING_WORST ms) and the RSS are not bounded"
	fi
	assert_eq "$pid" "$(systemctl show -p MainPID --value "$unit")" "$unit's MainPID"
	assert_eq "$restarts" "$(systemctl show -p NRestarts --value "$unit")" "$unit's NRestarts"
}

test_hostile_input_to_every_method_and_option_on_the_bus_costs_others_nothing() {
	setup_users
	cost bgrund.service system
}

test_hostile_input_to_every_method_and_option_on_a_listen_socket_costs_others_nothing() {
	[[ ${BGRUN_SANDBOX_KIND:-systemd} == systemd ]] || skip "needs the private systemd (tools/sandbox)"
	setup_users
	# bgrund --listen in place of bgrund.service (same state), as
	# test-listen.sh runs it, and put back when the test ends.
	systemctl stop bgrund.service
	on_exit "systemctl stop bgrund-listen.service 2>/dev/null; systemctl reset-failed bgrund-listen.service 2>/dev/null
		systemctl reset-failed bgrund.service 2>/dev/null; systemctl start bgrund.service"
	systemd-run --quiet --unit=bgrund-listen -p Type=notify "$BGRUN_LIBEXECDIR/bgrund" --listen ||
		fail "bgrund --listen did not start"
	[[ -S /run/bgrun/bus ]] || fail "no socket at /run/bgrun/bus"
	cost bgrund-listen.service unix:path=/run/bgrun/bus --listen unix:path=/run/bgrun/bus
}
