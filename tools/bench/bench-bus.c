/* SPDX-License-Identifier: MIT */
/* bgrun-bench: the bus connection, the signals it follows (bgrund's and
 * systemd's JobRemoved, systemd's UnitRemoved), waiting on it, and calls
 * to bgrund. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-common.h"

sd_bus *bus; /* the one connection: every call, bgrun's and the references' */

/* --- a set of strings (job ids, job paths, unit names) ----------------- */

typedef struct StrSet {
        char **keys;
        char **vals;
        size_t n, cap;
} StrSet;

static uint64_t hash_str(const char *s) {
        uint64_t h = UINT64_C(1469598103934665603);
        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * UINT64_C(1099511628211);
        return h;
}

static void set_put(StrSet *set, const char *k, const char *v);

static void set_grow(StrSet *set) {
        StrSet old = *set;
        set->cap = old.cap ? 2 * old.cap : 1024;
        set->n = 0;
        set->keys = xcalloc(set->cap, sizeof(char *));
        set->vals = xcalloc(set->cap, sizeof(char *));
        for (size_t i = 0; i < old.cap; i++)
                if (old.keys[i]) {
                        set_put(set, old.keys[i], old.vals[i]);
                        free(old.keys[i]);
                        free(old.vals[i]);
                }
        free(old.keys);
        free(old.vals);
}

static void set_put(StrSet *set, const char *k, const char *v) {
        if (2 * (set->n + 1) > set->cap)
                set_grow(set);
        size_t i = hash_str(k) & (set->cap - 1);
        while (set->keys[i] && !streq(set->keys[i], k))
                i = (i + 1) & (set->cap - 1);
        if (set->keys[i]) {
                free(set->vals[i]);
        } else {
                set->keys[i] = strdup(k);
                set->n++;
        }
        set->vals[i] = strdup(v ? v : "");
        if (!set->keys[i] || !set->vals[i])
                abort();
}

static const char *set_get(const StrSet *set, const char *k) {
        if (!set->cap)
                return NULL;
        size_t i = hash_str(k) & (set->cap - 1);
        while (set->keys[i]) {
                if (streq(set->keys[i], k))
                        return set->vals[i];
                i = (i + 1) & (set->cap - 1);
        }
        return NULL;
}

/* --- the signals ------------------------------------------------------- */

/* bgrund's JobRemoved: id → status. systemd's JobRemoved of our units: job
 * path → result. systemd's UnitRemoved of our units: unit name. */
static StrSet bgrun_ended, sd_jobs_removed, sd_units_removed;

static int on_bgrun_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *id, *path, *status;
        if (sd_bus_message_read(m, "sos", &id, &path, &status) >= 0)
                set_put(&bgrun_ended, id, status);
        return 0;
}

static int on_sd_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint32_t id;
        const char *path, *unit, *result;
        if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) >= 0 &&
            strncmp(unit, unit_prefix, strlen(unit_prefix)) == 0)
                set_put(&sd_jobs_removed, path, result);
        return 0;
}

static int on_sd_unit_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *unit, *path;
        if (sd_bus_message_read(m, "so", &unit, &path) >= 0 && strncmp(unit, unit_prefix, strlen(unit_prefix)) == 0)
                set_put(&sd_units_removed, unit, "");
        return 0;
}

/* bgrund sends JobNew and JobRemoved only to connections that subscribed;
 * a restarted bgrund (set_storage) has forgotten them. */
void bgrun_subscribe(void) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sd_bus_call_method(bus, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "Subscribe", &e,
                                   NULL, "");
        if (r < 0)
                die("bgrun Subscribe: %s", errmsg(&e));
}

/* Connect to the system bus and follow the signals above. */
void bus_connect(void) {
        int r;
        if (cgroupfs_mode) {
                /* bgrund --listen answers Hello, as a bus would; there is no
                 * systemd to subscribe to. */
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, LISTEN_ADDRESS);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, true);
                if (r >= 0)
                        r = sd_bus_start(bus);
                if (r < 0)
                        die("cannot connect to %s: %s", LISTEN_ADDRESS, strerror(-r));
                bgrun_subscribe();
                return;
        }
        r = sd_bus_open_system(&bus);
        if (r < 0)
                die("cannot connect to the system bus: %s", strerror(-r));

        r = sd_bus_match_signal(bus, NULL, NULL, BGRUN_PATH, BGRUN_IFACE, "JobRemoved", on_bgrun_job_removed, NULL);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, SD_NAME, SD_PATH, SD_IFACE, "JobRemoved", on_sd_job_removed, NULL);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, SD_NAME, SD_PATH, SD_IFACE, "UnitRemoved", on_sd_unit_removed, NULL);
        if (r < 0)
                die("cannot subscribe to signals: %s", strerror(-r));
        sd_bus_error e = SD_BUS_ERROR_NULL;
        r = sd_bus_call_method(bus, SD_NAME, SD_PATH, SD_IFACE, "Subscribe", &e, NULL, "");
        if (r < 0)
                die("systemd Subscribe: %s", errmsg(&e));
        bgrun_subscribe();
}

/* bgrund's status of an ended job; NULL until its JobRemoved came. */
const char *bgrun_job_ended(const char *id) {
        return set_get(&bgrun_ended, id);
}

/* The result of one of our units' systemd jobs; NULL until it was removed. */
const char *sd_job_removed(const char *job) {
        return set_get(&sd_jobs_removed, job);
}

bool sd_unit_removed(const char *unit) {
        return set_get(&sd_units_removed, unit) != NULL;
}

/* --- the bus ----------------------------------------------------------- */

/* Dispatch what is queued; if nothing was, wait for the bus at most max_usec. */
void bus_step(uint64_t max_usec) {
        int r = sd_bus_process(bus, NULL);
        if (r < 0)
                die("processing the bus failed: %s", strerror(-r));
        if (r > 0)
                return;
        r = sd_bus_wait(bus, max_usec);
        if (r < 0 && r != -EINTR)
                die("waiting on the bus failed: %s", strerror(-r));
}

void bus_drain(void) {
        int r;
        while ((r = sd_bus_process(bus, NULL)) > 0)
                ;
        if (r < 0)
                die("processing the bus failed: %s", strerror(-r));
}

/* Wait for the bus or any of fds (pidfds) at most max_usec. */
void wait_bus_and(const int *fds, size_t nfds, uint64_t max_usec) {
        struct pollfd p[1 + 64];
        size_t n = 0;
        bus_drain();
        int events = sd_bus_get_events(bus);
        if (events < 0)
                die("bus: %s", strerror(-events));
        p[n++] = (struct pollfd) { .fd = sd_bus_get_fd(bus), .events = (short) events };
        for (size_t i = 0; i < nfds && n < ELEMENTSOF(p); i++)
                if (fds[i] >= 0)
                        p[n++] = (struct pollfd) { .fd = fds[i], .events = POLLIN };
        uint64_t until, timeout_usec = max_usec;
        if (sd_bus_get_timeout(bus, &until) >= 0 && until != UINT64_MAX) {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                uint64_t now = (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
                uint64_t left = until > now ? until - now : 0;
                if (left < timeout_usec)
                        timeout_usec = left;
        }
        int timeout_ms = (int) ((timeout_usec + 999) / 1000);
        if (poll(p, n, timeout_ms) < 0 && errno != EINTR)
                die("poll: %m");
}

/* Call a Manager method of bgrund; NULL and *error set on failure. */
sd_bus_message *bgrun_call(const char *member, uint64_t timeout_usec, sd_bus_error *error,
                           const char *types, ...) {
        sd_bus_message *m = NULL, *reply = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, member);
        if (r >= 0 && types) {
                va_list ap;
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r < 0)
                die("building %s: %s", member, strerror(-r));
        r = sd_bus_call(bus, m, timeout_usec, error, &reply);
        sd_bus_message_unref(m);
        return r < 0 ? NULL : reply;
}

const char *errmsg(const sd_bus_error *e) {
        return e->message ? e->message : e->name ? e->name : "unknown error";
}
