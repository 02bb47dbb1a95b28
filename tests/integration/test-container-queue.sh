# SPDX-License-Identifier: MIT
# The queue in a container's setting (tools/sandbox --no-systemd: no
# systemd, no bus, bgrund --listen, the cgroupfs mechanism; issue #38).

in_container() {
	[[ ${BGRUN_SANDBOX_KIND:-} == container ]] || skip "needs tools/sandbox --no-systemd (a container's setting)"
}

ADDRESS=unix:path=/run/bgrun/bus

test_queue_through_the_socket_runs_in_order_and_survives_a_restart() {
	in_container
	local f=/run/bgrun-test-container-queue b ids=() i
	rm -f "$f"
	b=$(bgrun --address "$ADDRESS" run -q -s cq --queue --parallel 1 -- 'sleep 300') || fail "blocker"
	for i in 1 2 3 4 5; do
		ids+=("$(bgrun --address "$ADDRESS" run -q -s cq --queue --parallel 1 -- "echo $i >> $f")") || fail "launch $i"
	done
	assert_eq queued "$(bgrun --address "$ADDRESS" status "${ids[0]}" --json | jq -r .status)" "status"
	assert_eq 5 "$(bgrun --address "$ADDRESS" status "${ids[4]}" --json | jq -r .queue_position)" "the last one's place"
	"$BGRUN_SANDBOX_BGRUND" restart || fail "bgrund did not restart"
	assert_eq 5 "$(bgrun --address "$ADDRESS" list -s cq --status queued | tail -n +2 | wc -l)" "queued after a restart"
	bgrun --address "$ADDRESS" kill "$b" >/dev/null || fail "kill the blocker"
	bgrun --address "$ADDRESS" wait -t 60s "${ids[@]}" >/dev/null || fail "the queued jobs did not end"
	assert_eq "$(seq 1 5)" "$(cat "$f")" "what the jobs wrote: each once, in launch order"
	rm -f "$f"
}
