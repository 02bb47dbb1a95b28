# SPDX-License-Identifier: MIT
# bgrun mcp in a container's setting (tools/sandbox --no-systemd: no systemd,
# no bus, bgrund --listen): the README's line with --address, driven by the
# official MCP SDK with its default environment (issue #26).

MCP_DIR=$(cd "$TESTS_DIR/../mcp" && pwd)

in_container() {
	[[ ${BGRUN_SANDBOX_KIND:-} == container ]] || skip "needs tools/sandbox --no-systemd (a container's setting)"
}

mcp_scenario() {
	local out
	[[ -d $MCP_DIR/node_modules/@modelcontextprotocol/sdk ]] \
		|| fail "the MCP SDK is not installed in $MCP_DIR (tools/install-deps installs it)"
	out=$(node "$MCP_DIR/client.mjs" "$@" 2>&1) || fail "scenario $1 failed:
$out"
	echo "$out"
}

test_mcp_with_address_in_a_container() {
	in_container
	local out
	out=$(mcp_scenario basic -- bgrun --address unix:path=/run/bgrun/bus mcp)
	assert_contains "$out" "ok - run through the README's command line"
	assert_contains "$out" "MECHANISM cgroupfs"
}

test_mcp_in_a_container_stops_its_jobs_at_the_end() {
	in_container
	local out id
	out=$(mcp_scenario leave -- bgrun --address unix:path=/run/bgrun/bus mcp)
	id=$(sed -n 's/^JOB //p' <<<"$out")
	[[ -n $id ]] || fail "no job: $out"
	wait_until 15 bash -c "[[ \$(bgrun status $id --json | jq -r .status) == killed ]]" \
		|| fail "job $id still $(bgrun status "$id" --json | jq -r .status) after the client went away"
}
