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
	assert_eq '{"PrivateNetwork":true,"mechanisms":["network-namespace"]}' \
		"$(bgrun --address "$ADDRESS" status "$id" --json | jq -c .sandbox)" "the record's sandbox"
}

test_private_tmp_in_a_container() {
	in_container
	local out
	out=$(bgrun --address "$ADDRESS" run --wait -q -C / -p PrivateTmp=yes -- \
		'echo x > /tmp/bgrun-test-container-tmp; ls -A /tmp' 2>&1) || fail "PrivateTmp: $out"
	assert_eq bgrun-test-container-tmp "$out" "a container's job's /tmp of its own"
	[[ ! -e /tmp/bgrun-test-container-tmp ]] || fail "the job's /tmp reached the container's"
}
