# SPDX-License-Identifier: MIT
# ProtectGit (issue #48): a sandboxed job that may write a repository may
# not plant what git runs for its user later, outside the sandbox (hooks, a
# core.hooksPath in its config), nor make a repository where there was
# none; git add, commit, branch and stash still work; nothing of the
# sandbox's own is left in the user's tree. Each way in is shown open
# without ProtectGit (ProtectGit=no), so that the test can tell.

# git as alice, in $1, with an identity and no pager.
agit() {
	local dir=$1
	shift
	as_user alice env HOME=/home/alice GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a \
		GIT_COMMITTER_EMAIL=a@x git -C "$dir" "$@"
}

# A sandboxed job of alice's in $1 (its workspace), running $2; more -p after.
in_workspace() {
	local ws=$1 cmd=$2
	shift 2
	as_user alice env HOME=/home/alice "$BGRUN" run --wait -q -C "$ws" --sandbox workspace "$@" -- \
		"export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x; $cmd"
}

# What a job tries to plant, and whether each got there.
PLANT='{ echo "touch /home/alice/HOOK-RAN" > .git/hooks/post-commit; } 2>/dev/null && chmod +x .git/hooks/post-commit && echo hook-planted
git config core.hooksPath /home/alice 2>/dev/null && echo config-written
mkdir -p .git/info 2>/dev/null; { echo x > .git/info/attributes; } 2>/dev/null && echo info-written
echo change >> file && git add file && git commit -qm change && echo committed
git branch topic && git stash list >/dev/null && echo branched
mv .git .git-away 2>/dev/null && echo moved; true'

new_repo() { # DIR: alice's repository with one commit
	as_user alice mkdir -p "$1"
	agit "$1" init -q
	as_user alice sh -c "echo one > $1/file"
	agit "$1" add file
	agit "$1" commit -qm one
}

test_hooks_and_config_of_a_repository_are_out_of_reach() {
	setup_users
	local ws=/home/alice/repo-$$ out
	on_exit "rm -rf $ws /home/alice/HOOK-RAN"
	new_repo "$ws"
	out=$(in_workspace "$ws" "$PLANT; mv .git-away .git 2>/dev/null" -p ProtectGit=no) || fail "without ProtectGit: $out"
	assert_eq $'hook-planted\nconfig-written\ninfo-written\ncommitted\nbranched\nmoved' "$out" "alice's job without ProtectGit"
	rm -rf "$ws" /home/alice/HOOK-RAN
	new_repo "$ws"
	out=$(in_workspace "$ws" "$PLANT") || fail "sandboxed: $out"
	assert_eq $'committed\nbranched' "$out" "alice's sandboxed job"
	agit "$ws" commit -q --allow-empty -m outside
	[[ ! -e /home/alice/HOOK-RAN ]] || fail "a hook the job planted ran for alice"
	assert_eq change "$(tail -1 "$ws/file")" "the job's commit is there"
	assert_eq "" "$(agit "$ws" config core.hooksPath)" "the config outside"
	assert_eq "" "$(cd "$ws" && git status --porcelain --ignored | grep -v '^?? \.git' )" "nothing of the sandbox's is left in the tree"
}

# A workspace with no repository at its top gets none from the job (git
# init, or a .git of its own): its hooks would run for alice the next time
# she commits there. Nothing of it is left once the job ended, killed too.
test_no_new_repository_at_the_top_of_a_writable_path() {
	setup_users
	local ws=/home/alice/plain-$$ out id
	as_user alice mkdir -p "$ws"
	on_exit "rm -rf $ws"
	local init='git init -q 2>/dev/null && echo initialised; mkdir -p .git/hooks 2>/dev/null && echo made; ls -A; true'
	out=$(in_workspace "$ws" "$init" -p ProtectGit=no) || fail "without ProtectGit: $out"
	assert_eq $'initialised\nmade\n.git' "$out" "alice's job without ProtectGit"
	rm -rf "$ws/.git"
	out=$(in_workspace "$ws" "$init") || fail "sandboxed: $out"
	assert_eq .git "$out" "alice's sandboxed job: an empty .git it cannot use"
	assert_eq "" "$(ls -A "$ws")" "what is left in the workspace"
	# While a job runs its placeholder is there; killed, it is gone.
	id=$(as_user alice "$BGRUN" run -q -C "$ws" --sandbox workspace -- 'sleep 300') || fail "run: $id"
	wait_until 5 test -d "$ws/.git" || fail "no placeholder while the job runs"
	as_user alice "$BGRUN" kill "$id" >/dev/null || fail "kill"
	wait_until 5 test ! -e "$ws/.git" || fail "the placeholder was left after a kill"
	# A repository made outside meanwhile is the user's: it stays.
	id=$(as_user alice "$BGRUN" run -q -C "$ws" --sandbox workspace -- 'sleep 300') || fail "run: $id"
	wait_until 5 test -d "$ws/.git" || fail "no placeholder"
	agit "$ws" init -q
	as_user alice "$BGRUN" kill "$id" >/dev/null || fail "kill"
	sleep 0.3
	[[ -f $ws/.git/HEAD ]] || fail "alice's own repository was removed"
}

# A .git file (git init --separate-git-dir, a linked worktree) cannot be
# repointed, and what it points to is protected as a .git directory is.
test_a_gitdir_pointer_and_its_target_are_protected() {
	setup_users
	local ws=/home/alice/sep-$$ out
	on_exit "rm -rf $ws /home/alice/HOOK-RAN"
	as_user alice mkdir -p "$ws"
	agit "$ws" init -q --separate-git-dir="$ws/.real"
	as_user alice sh -c "echo one > $ws/file"
	agit "$ws" add file && agit "$ws" commit -qm one
	local plant='{ echo "touch /home/alice/HOOK-RAN" > .real/hooks/post-commit; } 2>/dev/null && echo hook-planted
		{ echo "gitdir: /home/alice/elsewhere" > .git; } 2>/dev/null && echo repointed
		echo change >> file && git commit -qam change && echo committed; true'
	out=$(in_workspace "$ws" "$plant") || fail "sandboxed: $out"
	assert_eq committed "$out" "alice's sandboxed job in a separate git dir's work tree"
	assert_eq "gitdir: $ws/.real" "$(cat "$ws/.git")" "the .git file"
}

# A linked worktree: its commits work, its repository's hooks stay out of
# reach even where the main work tree is writable too.
test_a_linked_worktree() {
	setup_users
	local main=/home/alice/main-$$ wt=/home/alice/wt-$$ out
	on_exit "rm -rf $main $wt /home/alice/HOOK-RAN"
	new_repo "$main"
	agit "$main" worktree add -q "$wt"
	out=$(in_workspace "$wt" "{ echo 'touch /home/alice/HOOK-RAN' > $main/.git/hooks/post-commit; } 2>/dev/null && echo hook-planted
		git config --worktree core.hooksPath /tmp 2>/dev/null && echo config-written
		echo change >> file && git commit -qam change && echo committed; true" -p ReadWritePaths="$main") || fail "sandboxed: $out"
	assert_eq committed "$out" "alice's sandboxed job in a linked worktree, the main tree writable"
	agit "$wt" commit -q --allow-empty -m outside
	[[ ! -e /home/alice/HOOK-RAN ]] || fail "a hook ran"
}

# hooks/ as a symlink (to a directory of the work tree), and a
# core.hooksPath: where they lead is read-only, the link cannot be
# repointed; the job itself runs.
test_a_symlinked_hooks_directory_and_core_hooks_path() {
	setup_users
	local ws=/home/alice/links-$$ out
	on_exit "rm -rf $ws /home/alice/HOOK-RAN"
	new_repo "$ws"
	as_user alice sh -c "mkdir $ws/githooks $ws/pathhooks && rm -rf $ws/.git/hooks && ln -s ../githooks $ws/.git/hooks"
	agit "$ws" config core.hooksPath pathhooks
	out=$(in_workspace "$ws" "{ echo x > githooks/post-commit; } 2>/dev/null && echo link-target-written
		{ echo x > pathhooks/post-commit; } 2>/dev/null && echo hooks-path-written
		rm .git/hooks 2>/dev/null && echo link-removed
		echo change >> file && git commit -qam change && echo committed; true") || fail "sandboxed: $out"
	assert_eq committed "$out" "alice's sandboxed job"
	assert_eq ../githooks "$(readlink "$ws/.git/hooks")" "the link"
}

# A job whose supervisor is SIGKILLed leaves its placeholder behind for no
# one: bgrund, releasing the job, removes it (as alice); one left while
# bgrund was away goes at its next start.
test_a_placeholder_outlives_no_supervisor() {
	setup_users
	local ws=/home/alice/lost-$$ id
	as_user alice mkdir -p "$ws"
	on_exit "rm -rf $ws"
	id=$(as_user alice "$BGRUN" run -q -C "$ws" --sandbox workspace -- 'sleep 300') || fail "run: $id"
	wait_until 5 test -d "$ws/.git" || fail "no placeholder while the job runs"
	kill -KILL "$(supervisor_pid "$id")"
	wait_until 10 test ! -e "$ws/.git" || fail "the placeholder outlived its supervisor"
	wait_until 10 test "$(job_status "$id")" != running || fail "the job was not released"

	id=$(as_user alice "$BGRUN" run -q -C "$ws" --sandbox workspace -- 'sleep 300') || fail "run: $id"
	wait_until 5 test -d "$ws/.git" || fail "no placeholder"
	systemctl stop bgrund.service
	kill -KILL "$(supervisor_pid "$id")"
	# The job itself is gone with the scope's... or not: bgrund's start settles it.
	systemctl start bgrund.service
	wait_until 10 test ! -e "$ws/.git" || fail "bgrund's start left the placeholder"
	wait_until 10 test ! -e "/var/lib/bgrun/jobs/$id/git-placeholders" || fail "the record stays"
}
