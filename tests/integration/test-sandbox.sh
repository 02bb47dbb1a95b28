# SPDX-License-Identifier: MIT
# The private systemd the tests run in is a real one with a real system bus
# (issue #2), and bgrund runs in it as a service.

test_system_bus_has_systemd_and_bgrun() {
	names=$(busctl --system list --no-legend --acquired | awk '{print $1}')
	assert_contains "$names" org.freedesktop.systemd1 "names on the system bus"
	assert_contains "$names" org.bgrun.Runtime1 "names on the system bus"
	assert_eq active "$(systemctl is-active bgrund.service)" "bgrund.service"
	assert_eq 1 "$(cat /proc/1/comm | grep -c '^systemd$')" "PID 1 is systemd"
	owner=$(busctl --system status org.bgrun.Runtime1 | awk -F= '/^PID=/ {print $2}')
	assert_eq "$(bgrund_pid)" "$owner" "pid owning org.bgrun.Runtime1"
	assert_eq '"enforcing"' "$(busctl get-property "${MGR[0]}" "${MGR[1]}" "${MGR[2]}" ContainmentMode | cut -d' ' -f2)" "default containment mode"
	assert_eq 'as 2 "systemd" "process_group"' "$(busctl get-property "${MGR[0]}" "${MGR[1]}" "${MGR[2]}" Mechanisms)" "mechanisms"
}

test_sandbox_tmp_and_state_are_private() {
	# Its own mounts, not the host's directories...
	for d in /tmp /run /var/lib/bgrun; do
		mountpoint -q "$d" || fail "$d is not a mount of the sandbox's own"
	done
	assert_eq tmpfs "$(stat -f -c %T /tmp)" "file system of /tmp"
	# ...so tools/test's marker in the host's /tmp is not visible in here.
	[[ -z $(ls /tmp/bgrun-test-marker.* 2>/dev/null) ]] || fail "the host's /tmp is visible inside the sandbox"
}
