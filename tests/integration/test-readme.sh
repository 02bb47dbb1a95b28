# SPDX-License-Identifier: MIT
# Every example in the README's "Using it" block runs, in order, and succeeds.

test_readme_examples_run() {
	readme=$(dirname "${BASH_SOURCE[0]}")/../../README.md
	awk '/tests\/integration\/test-readme.sh/ {grab=1; next}
	     grab && /^```sh/ {inblock=1; next}
	     inblock && /^```/ {exit}
	     inblock' "$readme" >examples.sh
	n=$(grep -cvE '^\s*(#|$)' examples.sh)
	((n >= 10)) || fail "found only $n example lines in the README"
	mkdir -p work && cd work
	out=$(bash -eo pipefail ../examples.sh 2>&1) || fail "README example failed: ${out: -600}"
	assert_contains "$out" "building with clang" "output of the --wait example"
	assert_contains "$out" $'fetch\nbuild\ntest\n' "output of logs -f"
	grep -qx '"exited"' <<<"$out" || fail "wait --json | jq .status of the build job did not print \"exited\" on its own line"
	assert_contains "$out" "killed, nothing of it is left alive" "kill's answer"
	assert_contains "$out" "/etc is read-only" "the sandbox example"
	[[ -s out.txt && ! -e /etc/x ]] || fail "the sandbox example wrote the wrong place"
}

# The "In CI" block: shards through the queue, the failed one named.
test_readme_ci_example_runs() {
	readme=$(dirname "${BASH_SOURCE[0]}")/../../README.md
	awk '/tests\/integration\/test-readme.sh \(in CI\)/ {grab=1; next}
	     grab && /^```sh/ {inblock=1; next}
	     inblock && /^```/ {exit}
	     inblock' "$readme" >ci.sh
	(($(grep -cvE '^\s*(#|$)' ci.sh) >= 5)) || fail "found no In CI block in the README"
	mkdir -p ci-work && cd ci-work
	local out
	out=$(bash -eo pipefail ../ci.sh 2>&1) || fail "the In CI block failed: ${out: -600}"
	assert_contains "$out" "wait exited with 1" "the first failure's status"
	assert_contains "$out" "1 of 8 jobs did not succeed" "wait names the failed shard"
	grep -qE "ci-shards +exited +1 " <<<"$out" || fail "list's EXIT of the failed shard: $out"
	assert_contains "$out" "Forgot 8 ended jobs"
}
