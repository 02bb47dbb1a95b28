# SPDX-License-Identifier: MIT
# The workspace an agent lives in (issue #51): bgrun mcp --sandbox
# workspace runs a call without cwd in the workspace, takes a relative cwd
# from it, adds --writable directories, sends ProtectGit=no with
# --no-protect-git, and tells the model its sandbox as it is.

# mcp_calls SERVER-ARGS... <<< CALLS: the first line (instructions and run's
# description), then each call's result, as clients/mcp-calls.py prints them.
mcp_calls() {
	python3 "$CLIENTS_DIR/mcp-calls.py" -- bgrun mcp "$@"
}

# A run call's JSON line: COMMAND [CWD].
run_call() {
	if [[ -n ${2:-} ]]; then
		jq -cn --arg c "$1" --arg d "$2" '{name: "run", arguments: {command: $c, cwd: $d, wait_sec: 20}}'
	else
		jq -cn --arg c "$1" '{name: "run", arguments: {command: $c, wait_sec: 20}}'
	fi
}

# The output of the result on line N of OUT.
output_of() { sed -n "$1p" <<<"$2" | jq -r .structuredContent.output; }

test_a_call_without_cwd_runs_in_the_workspace() {
	local ws=/root/mcp-ws-$$ out
	mkdir -p "$ws/sub"
	on_exit "rm -rf $ws"
	out=$(cd / && { run_call pwd; run_call pwd sub; run_call 'echo x > made && ls'; } |
		mcp_calls --sandbox workspace --workspace "$ws") || fail "the client: $out"
	assert_eq "$ws" "$(output_of 2 "$out")" "no cwd: the workspace, started from /"
	assert_eq "$ws/sub" "$(output_of 3 "$out")" "a relative cwd: from the workspace"
	assert_eq $'made\nsub' "$(output_of 4 "$out")" "written in the workspace"
	# Without a floor, the server's own directory.
	out=$(cd "$ws/sub" && run_call pwd | mcp_calls) || fail "the client: $out"
	assert_eq "$ws/sub" "$(output_of 2 "$out")" "no sandbox: the server's cwd"
}

test_writable_directories_add_to_the_workspace() {
	local ws=/root/mcp-ws-$$ cache=/root/mcp-cache-$$ out
	mkdir -p "$ws" "$cache"
	on_exit "rm -rf $ws $cache"
	out=$({ run_call "echo a > $cache/pip && echo written"; } |
		mcp_calls --sandbox workspace --workspace "$ws" --writable "$cache") || fail "the client: $out"
	assert_eq written "$(output_of 2 "$out")" "a --writable directory"
	assert_eq workspace "$(sed -n 2p <<<"$out" | jq -r .structuredContent.sandbox)" "the result's sandbox"
	assert_contains "$(sed -n 1p <<<"$out" | jq -r .instructions)" "the workspace $ws and $cache" "the instructions"
	out=$({ jq -cn --arg c "echo b > $cache/ro 2>&1 || echo refused" \
		'{name: "run", arguments: {command: $c, sandbox: "read-only", wait_sec: 20}}'; } |
		mcp_calls --sandbox workspace --workspace "$ws" --writable "$cache") || fail "the client: $out"
	assert_contains "$(output_of 2 "$out")" "refused" "read-only drops them"
	[[ ! -e $cache/ro ]] || fail "a read-only run wrote a --writable directory"
	local bad
	for bad in / "$HOME" /root/.. relative /nonexistent-$$; do
		out=$(bgrun mcp --sandbox workspace --writable "$bad" </dev/null 2>&1) && fail "--writable $bad was taken"
		assert_contains "$out" "--writable" "the error for $bad"
	done
	out=$(bgrun mcp --writable "$cache" </dev/null 2>&1) && fail "--writable without --sandbox was taken"
	assert_contains "$out" "go with --sandbox"
}

test_no_protect_git_and_git_commit_in_the_workspace() {
	local ws=/root/mcp-git-$$ out
	mkdir -p "$ws"
	on_exit "rm -rf $ws"
	git -C "$ws" init -q
	local commit="git -c user.name=a -c user.email=a@b commit -q --allow-empty -m c && git log --format=%s"
	out=$({ run_call "$commit"; run_call "echo x > .git/hooks/pre-commit 2>&1 || echo hook refused"; } |
		mcp_calls --sandbox workspace --workspace "$ws") || fail "the client: $out"
	assert_eq c "$(output_of 2 "$out")" "git commit in the workspace"
	assert_contains "$(output_of 3 "$out")" "hook refused"
	assert_contains "$(sed -n 1p <<<"$out" | jq -r .run_description)" "git's hooks and config are read-only"
	out=$(run_call "echo x > .git/hooks/pre-commit && echo hook written" |
		mcp_calls --sandbox workspace --workspace "$ws" --no-protect-git) || fail "the client: $out"
	assert_eq "hook written" "$(output_of 2 "$out")" "--no-protect-git"
	assert_contains "$(sed -n 1p <<<"$out" | jq -r .instructions)" "Git's files are as any other"
}

test_the_model_is_told_its_sandbox() {
	local ws=/root/mcp-told-$$ out first
	mkdir -p "$ws"
	on_exit "rm -rf $ws"
	first=$(mcp_calls --sandbox workspace --workspace "$ws" </dev/null | head -1)
	assert_contains "$(jq -r .instructions <<<"$first")" "read-only but the workspace $ws"
	assert_contains "$(jq -r .instructions <<<"$first")" "no network but a loopback of its own"
	assert_contains "$(jq -r .run_description <<<"$first")" "never retried without the sandbox"
	first=$(mcp_calls --sandbox workspace --workspace "$ws" --allow-domain pypi.org --allow-domain '*.npmjs.org' </dev/null | head -1)
	assert_contains "$(jq -r .instructions <<<"$first")" "only these hosts, over HTTP and HTTPS through a proxy (HTTP_PROXY is set; other protocols are not carried): pypi.org, *.npmjs.org"
	first=$(mcp_calls --sandbox read-only --workspace "$ws" --network </dev/null | head -1)
	assert_contains "$(jq -r .run_description <<<"$first")" "nothing is writable"
	assert_contains "$(jq -r .run_description <<<"$first")" "It has the host's network"
	first=$(mcp_calls </dev/null | head -1)
	assert_contains "$(jq -r .instructions <<<"$first")" "without a sandbox"
}
