# SPDX-License-Identifier: MIT
# Shell completion as installed: bash's is loaded by name and completes the
# verbs and -p properties bgrun itself knows, durations, and the ids of
# running and ended jobs from `bgrun list --json`; fish's completes the ids
# too; zsh's parses.

COMPLETION_PREFIX=${BGRUN_PREFIX:-/nonexistent}/share
BASH_COMPLETION=$COMPLETION_PREFIX/bash-completion/completions/bgrun
FISH_COMPLETION=$COMPLETION_PREFIX/fish/vendor_completions.d/bgrun.fish
ZSH_COMPLETION=$COMPLETION_PREFIX/zsh/site-functions/_bgrun

# bash_complete LINE: the completions bash offers at the end of LINE, one a
# line, driven the way readline drives it (COMP_WORDS split at blanks and at
# COMP_WORDBREAKS, COMP_CWORD, COMP_LINE, COMP_POINT).
bash_complete() {
	[[ -f $BASH_COMPLETION ]] || fail "$BASH_COMPLETION is not installed"
	bash --norc --noprofile -c '
		source "$1" || exit 1
		line=$2
		COMP_LINE=$line COMP_POINT=${#line}
		# Readline splits at blanks, and makes words of "=" and ":" too.
		read -ra COMP_WORDS <<<"${line//=/ = }"
		[[ $line == *" " || $line == *= ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_bgrun bgrun "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' bash "$BASH_COMPLETION" "$1"
}

test_bash_completion_registers_for_bgrun() {
	[[ -f $BASH_COMPLETION ]] || fail "$BASH_COMPLETION is not installed"
	out=$(bash --norc --noprofile -c 'source "$1" && complete -p bgrun' bash "$BASH_COMPLETION") ||
		fail "sourcing $BASH_COMPLETION or complete -p bgrun failed: $out"
	assert_eq "complete -F _bgrun bgrun" "$out" "complete -p bgrun"
}

# Every verb bgrun --help lists is offered, and nothing that is not a verb.
test_bash_completes_the_verbs_bgrun_has() {
	help=$(bgrun --help) || fail "bgrun --help failed"
	verbs=$(sed -n '/^Commands:/,/^$/p' <<<"$help" | awk 'NR > 1 && NF {print $1}'
		grep -oE '\(alias: [a-z]+\)' <<<"$help" | tr -d '()' | awk '{print $2}')
	offered=$(bash_complete "bgrun ")
	for v in $verbs; do
		grep -qx "$v" <<<"$offered" || fail "verb $v is not offered after 'bgrun ': $(echo $offered)"
	done
	out=$(bash_complete "bgrun st")
	assert_eq $'status\nstop' "$out" "completions of 'bgrun st'"
	out=$(bash_complete "bgrun --user li")
	assert_eq "list" "$out" "completions of 'bgrun --user li'"
	out=$(bash_complete "bgrun run --wa")
	assert_eq "--wait" "$out" "completions of 'bgrun run --wa'"
}

# The -p names are the ones bgrun run -p accepts: those its error names.
test_bash_completes_the_properties_bgrun_accepts() {
	err=$(bgrun run -p NoSuchProperty=1 -- true 2>&1) && fail "bgrun run -p NoSuchProperty=1 succeeded"
	known=$(sed -n 's/.*(known: \(.*\))\.$/\1/p' <<<"$err" | tr -d ' ' | tr ',' '\n' | sort)
	[[ -n $known ]] || fail "bgrun's error names no known properties: $err"
	offered=$(bash_complete "bgrun run -p " | sed 's/=$//' | sort)
	assert_eq "$known" "$offered" "-p properties offered vs accepted by bgrun"
	out=$(bash_complete "bgrun run -p MemoryMax=")
	assert_eq "infinity" "$out" "completion of 'bgrun run -p MemoryMax=' (the word after =)"
	out=$(bash_complete "bgrun run -t 90")
	assert_contains "$out" $'90s\n90min\n90h' "duration units after -t 90"
	out=$(bash_complete "bgrun run --timeout=5")
	assert_contains "$out" "5min" "duration units after --timeout=5"
}

test_bash_completes_job_ids_from_bgrun_list() {
	running=$(bgrun run -s completion -- 'sleep 60') || fail "bgrun run failed"
	ended=$(bgrun run -s completion -- 'true') || fail "bgrun run failed"
	trap 'bgrun kill "$running" >/dev/null; bgrun forget "$running" "$ended" >/dev/null 2>&1' EXIT
	bgrun wait "$ended" -t 10s >/dev/null
	assert_eq exited "$(job_status "$ended")" "status of the ended job"

	out=$(bash_complete "bgrun status ")
	grep -qx "$running" <<<"$out" || fail "'bgrun status ' does not offer running job $running: $(echo $out)"
	grep -qx "$ended" <<<"$out" || fail "'bgrun status ' does not offer ended job $ended: $(echo $out)"
	out=$(bash_complete "bgrun kill ")
	grep -qx "$running" <<<"$out" || fail "'bgrun kill ' does not offer running job $running"
	grep -qx "$ended" <<<"$out" && fail "'bgrun kill ' offers ended job $ended"
	out=$(bash_complete "bgrun forget ")
	grep -qx "$ended" <<<"$out" || fail "'bgrun forget ' does not offer ended job $ended"
	grep -qx "$running" <<<"$out" && fail "'bgrun forget ' offers running job $running"
	out=$(bash_complete "bgrun logs ${running:0:3}")
	grep -qx "$running" <<<"$out" || fail "'bgrun logs ${running:0:3}' does not offer $running"
	out=$(bash_complete "bgrun list -s compl")
	assert_eq completion "$out" "session completion"

	# Driven by COMP_WORDS and COMP_CWORD alone (no COMP_LINE), too.
	out=$(bash --norc --noprofile -c 'source "$1"
		COMP_WORDS=(bgrun wait "") COMP_CWORD=2
		_bgrun; printf "%s\n" "${COMPREPLY[@]}"' bash "$BASH_COMPLETION")
	grep -qx "$running" <<<"$out" || fail "COMP_WORDS=(bgrun wait '') does not offer $running: $(echo $out)"

	# Another user is offered its own jobs, and none of root's.
	ensure_user bgcomp
	mine=$(as_user bgcomp env PATH="$PATH" bgrun run -C / -- 'sleep 60') || fail "bgrun run as bgcomp failed"
	out=$(as_user bgcomp env PATH="$PATH" bash --norc --noprofile -c 'source "$1"
		COMP_WORDS=(bgrun status "") COMP_CWORD=2
		_bgrun; printf "%s\n" "${COMPREPLY[@]}"' bash "$BASH_COMPLETION")
	as_user bgcomp env PATH="$PATH" bgrun kill "$mine" >/dev/null
	as_user bgcomp env PATH="$PATH" bgrun forget "$mine" >/dev/null
	grep -qx "$mine" <<<"$out" || fail "user bgcomp is not offered its own job $mine: $(echo $out)"
	grep -qx "$running" <<<"$out" && fail "user bgcomp is offered root's job $running"
	return 0
}

test_fish_completes_job_ids() {
	command -v fish >/dev/null || fail "fish is missing: tools/install-deps installs it"
	[[ -f $FISH_COMPLETION ]] || fail "$FISH_COMPLETION is not installed"
	running=$(bgrun run -- 'sleep 60') || fail "bgrun run failed"
	trap 'bgrun kill "$running" >/dev/null; bgrun forget "$running" >/dev/null' EXIT
	out=$(fish --no-config -c 'source $argv[1]; complete -C "bgrun stop "' "$FISH_COMPLETION" 2>&1)
	grep -qx "$running"$'\t'running <<<"$out" || fail "fish does not offer $running after 'bgrun stop ': $out"
	out=$(fish --no-config -c 'source $argv[1]; complete -C "bgrun run -p Tas"' "$FISH_COMPLETION" 2>&1)
	assert_contains "$out" "TasksMax=" "fish: -p properties"
}

test_zsh_completion_parses_and_is_autoloadable() {
	command -v zsh >/dev/null || fail "zsh is missing: tools/install-deps installs it"
	[[ -f $ZSH_COMPLETION ]] || fail "$ZSH_COMPLETION is not installed"
	out=$(zsh -n "$ZSH_COMPLETION" 2>&1) || fail "zsh -n $ZSH_COMPLETION: $out"
	assert_eq "#compdef bgrun" "$(head -1 "$ZSH_COMPLETION")" "first line of _bgrun"
	# compinit finds it on fpath and binds it to bgrun.
	out=$(zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -D; print -r -- $_comps[bgrun]' \
		zsh "$(dirname "$ZSH_COMPLETION")" 2>&1)
	assert_eq "_bgrun" "$out" "\$_comps[bgrun] after compinit"
}
