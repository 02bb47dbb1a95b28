# SPDX-License-Identifier: MIT
# RequestId, Argv and WaitOutput in a container's setting (tools/sandbox
# --no-systemd: no systemd, no bus, bgrund --listen; issue #32).

in_container() {
	[[ ${BGRUN_SANDBOX_KIND:-} == container ]] || skip "needs tools/sandbox --no-systemd (a container's setting)"
}

ADDRESS=unix:path=/run/bgrun/bus

test_request_id_argv_and_wait_output_through_the_socket() {
	in_container
	local a b id f=/run/bgrun-test-container-once out
	rm -f "$f"
	a=$(bgrun --address "$ADDRESS" run -q --request-id c-$$ -- "echo ran >> $f") || fail "run"
	b=$(bgrun --address "$ADDRESS" run -q --request-id c-$$ -- "echo ran >> $f") || fail "run again"
	assert_eq "$a" "$b" "the second run with the request id"
	bgrun --address "$ADDRESS" wait "$a" >/dev/null
	assert_eq 1 "$(wc -l <"$f")" "times the command ran"
	# shellcheck disable=SC2016
	out=$(bgrun --address "$ADDRESS" run --wait -q -- printf '%s|' 'a b' '$HOME') || fail "run --wait"
	# shellcheck disable=SC2016
	assert_eq 'a b|$HOME|' "$out" "Argv through the socket"
	id=$(bgrun --address "$ADDRESS" run -q -- sh -c 'sleep 1; echo late; sleep 300') || fail "run"
	out=$(busctl --address="$ADDRESS" --timeout=60 call org.bgrun.Runtime1 /org/bgrun/Runtime1 \
		org.bgrun.Runtime1.Manager WaitOutput stut "$id" 0 100 30000000)
	assert_eq "aytb 5 108 97 116 101 10 5 false" "$out" "WaitOutput through the socket"
	bgrun --address "$ADDRESS" kill "$id" >/dev/null
	rm -f "$f"
}
