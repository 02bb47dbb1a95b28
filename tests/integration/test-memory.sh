# SPDX-License-Identifier: MIT
# bgrund's memory stays flat as finished jobs pile up (issue #3, item 10).

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$(bgrund_pid)/status"; }

launch_n() { # N: launch N `true` jobs, 4 at a time, and wait until all ended
	seq "$1" | xargs -P 4 -I{} bgrun run -- true >/dev/null || fail "a launch failed"
	wait_until 60 bash -c '[[ $(busctl get-property org.bgrun.Runtime1 /org/bgrun/Runtime1 org.bgrun.Runtime1.Manager RunningJobs) == "u 0" ]]' ||
		fail "jobs still running"
}

test_rss_flat_over_2000_finished_jobs() {
	launch_n 100 # warm up allocator arenas and caches
	before=$(rss_kb)
	launch_n 2000
	after=$(rss_kb)
	growth=$((after - before))
	echo "NOTE: bgrund RSS ${before} kB -> ${after} kB after 2000 more finished jobs (+${growth} kB)"
	assert_le "$growth" 5120 "kB of RSS growth over 2000 finished jobs"
	# ListJobs answers this many in batches: every record once, oldest first.
	ids=$(bgrun list --json | jq -r '.[].id')
	total=$(wc -l <<<"$ids")
	((total >= 2100)) || fail "only $total jobs listed"
	assert_eq "$total" "$(sort -u <<<"$ids" | wc -l)" "distinct ids listed"
	assert_eq "$(jq -rs 'sort_by(.created_at, .id) | .[].id' /var/lib/bgrun/jobs/*/spec.json)" "$ids" \
		"the list against the store, by creation time"
	# Leave the store as we found it for the tests after this one.
	xargs -P 4 -n 50 sh -c 'for id; do bgrun forget "$id"; done' _ <<<"$ids" || fail "forget failed"
}
