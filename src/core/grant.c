/* SPDX-License-Identifier: MIT */
#include "fileio.h"
#include "grant.h"
#include "job-record.h"
#include "json-util.h"
#include "macro.h"
#include "time-util.h"

void grant_done(Grant *g) {
        free(g->unit);
        free(g->cgroup);
        *g = (Grant) {};
}

int grant_to_json(const Grant *g, char **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        int r = json_add_u64(o, "format", RECORD_FORMAT);
        if (r >= 0) r = json_add_str(o, "state", g->state == GRANT_OPEN ? "open" : "released");
        if (r >= 0) r = json_add_str(o, "mechanism", mechanism_to_string(g->mechanism));
        if (r >= 0) r = json_add_str(o, "unit", g->unit);
        if (r >= 0) r = json_add_str(o, "cgroup", g->cgroup);
        if (r >= 0) r = json_add_u64(o, "owner", g->owner);
        if (r >= 0) r = json_add_u64(o, "opened_at", g->opened_at);
        if (r >= 0) r = json_add_bool(o, "dead", g->dead);
        if (r >= 0) r = json_add_str(o, "method", teardown_method_to_string(g->method));
        if (r >= 0) r = json_add_u64(o, "released_at", g->released_at);
        return json_finish(o, r, ret);
}

int grant_from_json(const char *json, Grant *ret) {
        _cleanup_json_ json_object *o = NULL;
        _cleanup_(grant_done) Grant g = {};
        _cleanup_free_ char *state = NULL, *mechanism = NULL, *method = NULL;

        int r = json_parse_object(json, &o);
        if (r >= 0) r = record_format_check(o);
        if (r >= 0) r = json_get_str(o, "state", &state);
        if (r >= 0) r = json_get_str(o, "mechanism", &mechanism);
        if (r >= 0) r = json_get_str(o, "unit", &g.unit);
        if (r >= 0) r = json_get_str(o, "cgroup", &g.cgroup);
        uint64_t owner = UID_INVALID;
        if (r >= 0 && json_object_object_get_ex(o, "owner", NULL))
                r = json_get_u64(o, "owner", UINT32_MAX, &owner);
        g.owner = (uid_t) owner;
        if (r >= 0) r = json_get_u64(o, "opened_at", UINT64_MAX, &g.opened_at);
        if (r >= 0) r = json_get_bool(o, "dead", &g.dead);
        if (r >= 0) r = json_get_str(o, "method", &method);
        if (r >= 0) r = json_get_u64(o, "released_at", UINT64_MAX, &g.released_at);
        if (r < 0)
                return r;

        if (streq(state, "open"))
                g.state = GRANT_OPEN;
        else if (streq(state, "released"))
                g.state = GRANT_RELEASED;
        else
                return -EBADMSG;
        int m = mechanism_from_string(mechanism);
        if (m < 0)
                return -EBADMSG;
        g.mechanism = m;
        m = teardown_method_from_string(method);
        if (m < 0)
                return -EBADMSG;
        g.method = m;
        /* A released grant without a confirmed teardown cannot exist. */
        if (g.state == GRANT_RELEASED && !g.dead)
                return -EBADMSG;

        *ret = g;
        g = (Grant) {};
        return 0;
}

static int grant_write(int dir_fd, const Grant *g) {
        _cleanup_free_ char *json = NULL;
        int r = grant_to_json(g, &json);
        /* Never synced: what it grants, a power loss ends (job-store.h). */
        return r < 0 ? r : write_file_atomic_at(dir_fd, GRANT_FILE, json, strlen(json), 0600, 0);
}

int grant_open(int dir_fd, Mechanism mechanism, const char *unit, const char *cgroup, uid_t owner) {
        Grant g = {
                .state = GRANT_OPEN,
                .mechanism = mechanism,
                .unit = (char *) (unit ?: ""),
                .cgroup = (char *) (cgroup ?: ""),
                .owner = owner,
                .opened_at = now_realtime_usec(),
        };
        return grant_write(dir_fd, &g);
}

int grant_read(int dir_fd, Grant *ret) {
        _cleanup_free_ char *json = NULL;
        int r = read_file_at(dir_fd, GRANT_FILE, 64 * 1024, &json, NULL);
        return r < 0 ? r : grant_from_json(json, ret);
}

int grant_release_read(int dir_fd, Grant *g, TeardownMethod method) {
        if (g->state == GRANT_RELEASED)
                return 0;
        g->state = GRANT_RELEASED;
        g->dead = true;
        g->method = method;
        g->released_at = now_realtime_usec();
        return grant_write(dir_fd, g);
}

int grant_release(int dir_fd, TeardownMethod method) {
        _cleanup_(grant_done) Grant g = {};
        int r = grant_read(dir_fd, &g);
        return r < 0 ? r : grant_release_read(dir_fd, &g, method);
}
