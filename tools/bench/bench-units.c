/* SPDX-License-Identifier: MIT */
/* bgrun-bench: systemd's transient units, started with a raw
 * StartTransientUnit on our connection: the references of the launch and
 * throughput measurements. */
#include <stdio.h>
#include <string.h>

#include "bench-common.h"

static unsigned unit_counter;

char *next_unit_name(const char *suffix) {
        return fmt("%s%u%s", unit_prefix, unit_counter++, suffix);
}

static int on_stu_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Unit *u = userdata;
        const char *job;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e || sd_bus_message_read(m, "o", &job) < 0) {
                progress("StartTransientUnit %s failed: %s", u->name, e ? errmsg(e) : "bad reply");
                u->state = 4;
                return 0;
        }
        snprintf(u->job, sizeof u->job, "%s", job);
        u->state = 2;
        return 0;
}

/* Without scope_pid, a Type=exec service running /bin/true; with it, a scope
 * holding that process (the way bgrund starts a job). */
void stu_send(Unit *u, pid_t scope_pid) {
        sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, SD_NAME, SD_PATH, SD_IFACE, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", u->name, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)", "Description", "s", "bgrun-bench reference",
                                          "CollectMode", "s", "inactive-or-failed");
        if (r >= 0 && scope_pid > 0)
                r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, (uint32_t) scope_pid);
        else if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)", "Type", "s", "exec", "ExecStart", "a(sasb)", 1, "/bin/true",
                                          1, "/bin/true", 0);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r >= 0)
                r = sd_bus_call_async(bus, NULL, m, on_stu_reply, u, CALL_TIMEOUT);
        sd_bus_message_unref(m);
        if (r < 0)
                die("StartTransientUnit: %s", strerror(-r));
        u->state = 1;
}

/* Has the unit's start job finished? */
bool unit_started(Unit *u) {
        if (u->state == 2) {
                const char *res = sd_job_removed(u->job);
                if (res) {
                        u->state = streq(res, "done") ? 3 : 4;
                        if (u->state == 4)
                                progress("start job of %s: %s", u->name, res);
                }
        }
        return u->state >= 3;
}

bool unit_removed(const Unit *u) {
        return sd_unit_removed(u->name);
}

bool wait_unit_removed(const Unit *u, double timeout_s) {
        uint64_t t0 = now_ns();
        while (!unit_removed(u)) {
                if (s_since(t0) > timeout_s) {
                        progress("unit %s not collected after %.0f s", u->name, timeout_s);
                        return false;
                }
                bus_step(100 * USEC_PER_MSEC);
        }
        return true;
}
