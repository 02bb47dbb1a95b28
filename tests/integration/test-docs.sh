# SPDX-License-Identifier: MIT
# The reference in docs/ and the man pages against what bgrund and the code
# have: introspection of the manager and of a job object, the Launch option
# and record key tables (include/bgrun/), the configuration keys (config.c and
# bgrund --check-config), in both directions (docs-drift.py); the CLI's
# verbs and options against bgrun(1) and bgrund(8); and the man pages as
# `man -l` renders them.

DOCS_TOP=$(cd "$TESTS_DIR/../.." && pwd)
# The man pages as meson installed them into the sandbox's staging prefix.
MAN_DIR=${BGRUN_PREFIX:-/nonexistent}/share/man

drift() { # docs-drift.py ARGS...: its findings are the failure message
	local out
	out=$(/usr/bin/python3 "$CLIENTS_DIR/docs-drift.py" "$@" 2>&1) ||
		fail "the reference and the code differ ($(wc -l <<<"$out") findings):"$'\n'"$out"
}

test_reference_matches_introspection_of_the_manager_and_a_job() {
	busctl introspect --xml-interface org.bgrun.Runtime1 /org/bgrun/Runtime1 >manager.xml ||
		fail "busctl introspect of the manager failed"
	id=$(bgrun run -- 'sleep 30') || fail "bgrun run failed"
	busctl introspect --xml-interface org.bgrun.Runtime1 "/org/bgrun/Runtime1/job/$id" >job.xml
	rc=$?
	bgrun kill "$id" >/dev/null
	((rc == 0)) || fail "busctl introspect of job $id failed"
	drift bus "$DOCS_TOP" manager.xml job.xml
}

test_reference_matches_the_launch_option_record_key_and_error_tables() {
	drift tables "$DOCS_TOP"
}

test_configuration_reference_matches_config_c_and_check_config() {
	bgrund --check-config >check-config.txt 2>&1 || fail "bgrund --check-config failed: $(cat check-config.txt)"
	drift config "$DOCS_TOP" check-config.txt
}

# What bgrun status --json prints is what the record table lists.
test_every_key_bgrun_status_prints_is_documented() {
	id=$(bgrun run -- 'echo hi') || fail "bgrun run failed"
	bgrun wait "$id" -t 10s >/dev/null
	keys=$(bgrun status "$id" --json | jq -r 'keys[]') || fail "bgrun status --json failed"
	bgrun forget "$id"
	[[ -n $keys ]] || fail "no keys in the record"
	for k in $keys; do
		grep -qF "| \`$k\` |" "$DOCS_TOP/docs/org.bgrun.Runtime1.md" ||
			fail "record key $k (bgrun status --json) is not in the record table of docs/org.bgrun.Runtime1.md"
	done
}

# Every verb and long option that bgrun --help and bgrund --help show is in
# their man page. (The other direction is the contract's: the pages describe
# what is being built as well.)
test_cli_verbs_and_options_are_in_the_man_pages() {
	local help missing=()
	help=$(bgrun --help) || fail "bgrun --help failed"
	verbs=$(sed -n '/^Commands:/,/^$/p' <<<"$help" | awk 'NR > 1 && NF {print $1}')
	[[ -n $verbs ]] || fail "no verbs found in bgrun --help"
	for v in $verbs $(grep -oE '\(alias: [a-z]+\)' <<<"$help" | tr -d '()' | awk '{print $2}'); do
		# A verb's entry: a line of VERBS that starts with a verb and names it.
		grep -qE "^\*([a-z]+\*[^*]*\*)?$v\*" "$DOCS_TOP/man/bgrun.1.scd" || missing+=("bgrun.1: verb $v")
	done
	# (not an option named in prose: "bgrund --listen's socket")
	for o in $(grep -oE -- "--[a-z][a-z-]+'?" <<<"$help" | grep -v "'$" | sort -u); do
		grep -qF -- "*$o*" "$DOCS_TOP/man/bgrun.1.scd" || missing+=("bgrun.1: option $o")
	done
	# The -p properties bgrun accepts: those its error names.
	err=$(bgrun run -p NoSuchProperty=1 -- true 2>&1)
	props=$(sed -n 's/.*(known: \(.*\))\.$/\1/p' <<<"$err" | tr -d ' ' | tr ',' ' ')
	[[ -n $props ]] || fail "bgrun's error names no known properties: $err"
	for p in $props; do
		grep -qF -- "*$p=*" "$DOCS_TOP/man/bgrun.1.scd" || missing+=("bgrun.1: -p $p=")
	done
	for o in $(bgrund --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -qF -- "*$o" "$DOCS_TOP/man/bgrund.8.scd" || missing+=("bgrund.8: option $o")
	done
	((${#missing[@]} == 0)) || fail "not documented: ${missing[*]}"
}

# man_render PAGE: the page as man -l shows it at 80 columns; groff's
# warnings fail the test.
man_render() {
	local page=$MAN_DIR/$1
	[[ -f $page ]] || fail "$page is not installed (meson -Dman=auto with scdoc installs it)"
	MANWIDTH=80 man --warnings -l "$page" 2>man.err >man.out ||
		fail "man -l $1 failed: $(cat man.err)"
	[[ ! -s man.err ]] || fail "man -l $1 warned: $(head -5 man.err)"
	cat man.out
}

need_man() {
	command -v man >/dev/null || fail "man is missing (man-db): tools/install-deps installs it"
	command -v scdoc >/dev/null || fail "scdoc is missing: tools/install-deps installs it"
	[[ -d $MAN_DIR ]] || fail "no man pages in $MAN_DIR although scdoc is installed"
}

test_man_pages_render_with_their_sections() {
	need_man
	out=$(man_render man1/bgrun.1)
	for s in NAME SYNOPSIS DESCRIPTION VERBS OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
		grep -qxF "$s" <<<"$out" || fail "bgrun(1) has no $s section"
	done
	assert_contains "$out" "bgrun run --wait -t 5min" "bgrun(1) examples"
	assert_contains "$out" "128+N" "bgrun(1) exit status"
	# A backslash of a code block is the reader's to type (issue #25).
	assert_contains "$out" "printf '3\\n1\\n2\\n' | bgrun run --stdin" "bgrun(1) examples' backslashes"

	out=$(man_render man8/bgrund.8)
	for s in NAME SYNOPSIS OPTIONS SIGNALS FILES EXAMPLES; do
		grep -qxF "$s" <<<"$out" || fail "bgrund(8) has no $s section"
	done
	assert_contains "$out" "--check-config" "bgrund(8)"

	out=$(man_render man5/bgrund.conf.5)
	for s in NAME DESCRIPTION "[Runtime]" "[Limits]" EXAMPLES; do
		grep -qxF "$s" <<<"$out" || fail "bgrund.conf(5) has no $s section"
	done
	assert_contains "$out" "MaxRunningJobs=" "bgrund.conf(5)"

	out=$(man_render man5/org.bgrun.Runtime1.5)
	for s in NAME "THE MANAGER OBJECT" "JOB OBJECTS" "THE JOB RECORD" "LAUNCH OPTIONS" ERRORS EXAMPLES; do
		grep -qxF "$s" <<<"$out" || fail "org.bgrun.Runtime1(5) has no $s section"
	done
	# The IDL block comes through verbatim, and a table as tagged paragraphs.
	assert_contains "$out" "Launch(in  s command," "org.bgrun.Runtime1(5) IDL"
	grep -qE '^ +MaxRuntimeUSec \(t\)$' <<<"$out" || fail "org.bgrun.Runtime1(5): no 'MaxRuntimeUSec (t)' entry"
	# The examples' lines go on after a backslash, which is there to type.
	grep -qE 'org\.bgrun\.Runtime1\.Manager \\$' <<<"$out" ||
		fail "org.bgrun.Runtime1(5): no example line ending in its backslash"
}

# The man pages are found by name where man looks in this prefix.
test_man_finds_the_installed_pages_by_name() {
	need_man
	for p in "1 bgrun" "8 bgrund" "5 bgrund.conf" "5 org.bgrun.Runtime1"; do
		set -- $p
		path=$(MANPATH=$MAN_DIR man -w "$1" "$2" 2>&1) || fail "man -w $1 $2 found nothing: $path"
		assert_eq "$MAN_DIR/man$1/$2.$1" "$path" "man -w $1 $2"
	done
}
