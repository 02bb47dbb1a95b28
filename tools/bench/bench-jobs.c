/* SPDX-License-Identifier: MIT */
/* bgrun-bench: bgrun's jobs over the bus: Launch, Get and Wait (the job
 * record), Forget, many calls at a time, and bgrund itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-common.h"
#include "bus-json.h"
#include "record-keys.h"

/* --- the job record ---------------------------------------------------- */

/* A value by its entry in the shared key tables: NULL if absent or of
 * another type than the table's. */
static json_object *rec_get(json_object *dict, const KeyInfo *key) {
        return bus_json_get(dict, key->name, key->signature);
}

/* The record, or Kill's reply, read by the shared D-Bus → JSON reader, and
 * what we use of it picked out by the shared key tables. */
int read_rec(sd_bus_message *m, Rec *rec) {
        json_object *dict = NULL, *v, *containment, *teardown;
        int r = bus_json_read(m, &dict);
        if (r < 0)
                return r;
        if (r == 0 || !json_object_is_type(dict, json_type_object)) {
                json_object_put(dict);
                return -EBADMSG;
        }

        if ((v = rec_get(dict, &record_keys[RECORD_KEY_STATUS])))
                snprintf(rec->status, sizeof rec->status, "%s", json_object_get_string(v));
        if ((v = rec_get(dict, &record_keys[RECORD_KEY_OUTPUT_BYTES])))
                rec->output_bytes = json_object_get_uint64(v);
        if ((v = rec_get(dict, &record_keys[RECORD_KEY_STARTED_AT])))
                rec->started_at = json_object_get_uint64(v);
        if ((v = rec_get(dict, &kill_keys[KILL_KEY_KILLED])))
                rec->killed = json_object_get_boolean(v);

        containment = rec_get(dict, &record_keys[RECORD_KEY_CONTAINMENT]);
        if ((v = rec_get(containment, &containment_keys[CONTAINMENT_KEY_CGROUP])))
                snprintf(rec->cgroup, sizeof rec->cgroup, "%s", json_object_get_string(v));

        /* The record's teardown and Kill's are the same dictionary. */
        teardown = rec_get(dict, &record_keys[RECORD_KEY_TEARDOWN]) ?: rec_get(dict, &kill_keys[KILL_KEY_TEARDOWN]);
        if ((v = rec_get(teardown, &teardown_keys[TEARDOWN_KEY_DEAD])))
                rec->dead = json_object_get_boolean(v);
        if ((v = rec_get(teardown, &teardown_keys[TEARDOWN_KEY_CONFIRMED_AT])))
                rec->confirmed_at = json_object_get_uint64(v);

        json_object_put(dict);
        return 0;
}

/* --- bgrun operations -------------------------------------------------- */

bool launch(const char *command, JobId *ret, double *ret_ms) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        uint64_t t0 = now_ns();
        sd_bus_message *reply = bgrun_call("Launch", CALL_TIMEOUT, &e, "sssa{sv}", command, session, "/", 0);
        double ms = ms_since(t0);
        if (!reply) {
                progress("Launch failed: %s", errmsg(&e));
                sd_bus_error_free(&e);
                return false;
        }
        const char *id, *path;
        int r = sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                die("Launch: unexpected reply: %s", strerror(-r));
        snprintf(ret->s, sizeof ret->s, "%s", id);
        sd_bus_message_unref(reply);
        if (ret_ms)
                *ret_ms = ms;
        return true;
}

/* Get (timeout 0) or Wait for the job's end. */
bool record(const char *member, const char *id, uint64_t timeout_usec, Rec *rec) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply;
        *rec = (Rec) {};
        if (streq(member, "Wait"))
                reply = bgrun_call("Wait", timeout_usec + CALL_TIMEOUT, &e, "st", id, timeout_usec);
        else
                reply = bgrun_call("Get", CALL_TIMEOUT, &e, "s", id);
        if (!reply) {
                progress("%s %s failed: %s", member, id, errmsg(&e));
                sd_bus_error_free(&e);
                return false;
        }
        int r = read_rec(reply, rec);
        sd_bus_message_unref(reply);
        if (r < 0)
                die("%s: unexpected reply: %s", member, strerror(-r));
        return true;
}

bool launch_round(bool keep, Samples *s_launch, Samples *s_exec, Samples *s_reply, Rec *ret_rec) {
        JobId id;
        double ms;
        *ret_rec = (Rec) {};
        uint64_t rt0 = now_rt_usec();
        if (!launch("true", &id, &ms))
                return false;
        uint64_t rt1 = now_rt_usec();
        if (keep)
                sample_add(s_launch, ms);
        bool ok = record("Wait", id.s, 30 * USEC_PER_SEC, ret_rec) && streq(ret_rec->status, "exited");
        if (ok && keep && ret_rec->started_at >= rt0 && ret_rec->started_at <= rt1) {
                sample_add(s_exec, (double) (ret_rec->started_at - rt0) / 1000);
                sample_add(s_reply, (double) (rt1 - ret_rec->started_at) / 1000);
        }
        forget(id.s);
        return ok;
}

bool forget(const char *id) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = bgrun_call("Forget", CALL_TIMEOUT, &e, "s", id);
        if (!reply) {
                progress("Forget %s failed: %s", id, errmsg(&e));
                sd_bus_error_free(&e);
                return false;
        }
        sd_bus_message_unref(reply);
        return true;
}

/* Many calls of METHOD(s id), at most `par` in flight. */
typedef struct Batch {
        unsigned inflight;
        size_t errors;
        char first_error[256];
} Batch;

static int on_batch_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Batch *b = userdata;
        b->inflight--;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e) {
                if (!b->errors++)
                        snprintf(b->first_error, sizeof b->first_error, "%s", errmsg(e));
        }
        return 0;
}

size_t batch(const char *member, const JobId *ids, size_t n, unsigned par) {
        Batch b = {};
        size_t next = 0;
        while (next < n || b.inflight > 0) {
                while (next < n && b.inflight < par) {
                        const char *id = ids[next++].s;
                        if (!*id)
                                continue;
                        int r = sd_bus_call_method_async(bus, NULL, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, member,
                                                         on_batch_reply, &b, "s", id);
                        if (r < 0)
                                die("%s: %s", member, strerror(-r));
                        b.inflight++;
                }
                bus_step(USEC_PER_SEC);
        }
        if (b.errors)
                progress("%zu of %zu %s calls failed, first: %s", b.errors, n, member, b.first_error);
        return b.errors;
}

/* Launch n jobs of `command`, at most `par` Launch calls in flight; with
 * wait_end, until all of them have ended (bgrund's JobRemoved). Returns the
 * seconds from the first call, or -1 if something did not finish. */
typedef struct Launcher {
        JobId *ids;
        unsigned inflight;
        size_t replied, failed;
} Launcher;

typedef struct LaunchReq {
        Launcher *l;
        size_t idx;
} LaunchReq;

static int on_launch_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        LaunchReq *q = userdata;
        Launcher *l = q->l;
        const char *id, *path;
        l->inflight--;
        l->replied++;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e || sd_bus_message_read(m, "so", &id, &path) < 0) {
                if (!l->failed++)
                        progress("Launch failed: %s", e ? errmsg(e) : "bad reply");
                l->ids[q->idx].s[0] = '\0';
        } else
                snprintf(l->ids[q->idx].s, sizeof l->ids[q->idx].s, "%s", id);
        return 0;
}

static size_t count_ended(const JobId *ids, size_t n, size_t *failed) {
        size_t ended = 0;
        for (size_t i = 0; i < n; i++) {
                if (!ids[i].s[0]) {
                        ended++;
                        continue;
                }
                const char *st = bgrun_job_ended(ids[i].s);
                if (st) {
                        ended++;
                        if (failed && !streq(st, "exited"))
                                (*failed)++;
                }
        }
        return ended;
}

/* Launch with Queue and MaxParallel max_parallel, or with no option when 0. */
static int send_launch(const char *command, uint32_t max_parallel, LaunchReq *req) {
        if (max_parallel == 0)
                return sd_bus_call_method_async(bus, NULL, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "Launch", on_launch_reply,
                                                req, "sssa{sv}", command, session, "/", 0);
        return sd_bus_call_method_async(bus, NULL, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "Launch", on_launch_reply, req,
                                        "sssa{sv}", command, session, "/", 2, "Queue", "b", 1, "MaxParallel", "u",
                                        max_parallel);
}

static double launch_many_with(const char *command, size_t n, unsigned par, uint32_t max_parallel, JobId *ids,
                               bool wait_end, size_t *ret_failed) {
        Launcher l = { .ids = ids };
        LaunchReq *reqs = xcalloc(n, sizeof(LaunchReq));
        size_t next = 0, done_from = 0;
        uint64_t t0 = now_ns(), last_note = t0;
        double deadline_s = 60 + (double) n * 0.5;

        while (l.replied < n) {
                while (next < n && l.inflight < par) {
                        reqs[next] = (LaunchReq) { &l, next };
                        int r = send_launch(command, max_parallel, &reqs[next]);
                        if (r < 0)
                                die("Launch: %s", strerror(-r));
                        next++;
                        l.inflight++;
                }
                bus_step(USEC_PER_SEC);
                if (n >= 500 && (now_ns() - last_note) > 10 * UINT64_C(1000000000)) {
                        last_note = now_ns();
                        progress("  ... %zu of %zu launched", l.replied, n);
                }
                if (s_since(t0) > deadline_s)
                        die("launching %zu jobs took longer than %.0f s", n, deadline_s);
        }
        double secs = s_since(t0);
        size_t failed = l.failed;
        if (wait_end) {
                /* The ids before done_from have all ended. */
                while (true) {
                        while (done_from < n && (!ids[done_from].s[0] || bgrun_job_ended(ids[done_from].s)))
                                done_from++;
                        if (done_from == n)
                                break;
                        if (s_since(t0) > deadline_s) {
                                progress("jobs still running after %.0f s", deadline_s);
                                free(reqs);
                                return -1;
                        }
                        bus_step(USEC_PER_SEC);
                }
                secs = s_since(t0);
                size_t bad = 0;
                count_ended(ids, n, &bad);
                failed += bad;
        }
        free(reqs);
        if (ret_failed)
                *ret_failed = failed;
        return secs;
}

double launch_many(const char *command, size_t n, unsigned par, JobId *ids, bool wait_end, size_t *ret_failed) {
        return launch_many_with(command, n, par, 0, ids, wait_end, ret_failed);
}

double launch_many_queued(const char *command, size_t n, unsigned par, uint32_t max_parallel, JobId *ids,
                          size_t *ret_failed) {
        return launch_many_with(command, n, par, max_parallel, ids, true, ret_failed);
}

pid_t bgrund_pid(void) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        uint32_t pid = 0;
        int r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                   "GetConnectionUnixProcessID", &e, &reply, "s", BGRUN_NAME);
        if (r < 0)
                die("cannot find bgrund's pid: %s", errmsg(&e));
        if (sd_bus_message_read(reply, "u", &pid) < 0)
                die("GetConnectionUnixProcessID: bad reply");
        sd_bus_message_unref(reply);
        return (pid_t) pid;
}

uint32_t running_jobs(void) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        uint32_t n = 0;
        int r = sd_bus_get_property_trivial(bus, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "RunningJobs", &e, 'u', &n);
        if (r < 0)
                die("RunningJobs: %s", errmsg(&e));
        return n;
}

void wait_no_running(void) {
        uint64_t t0 = now_ns();
        while (running_jobs() > 0) {
                if (s_since(t0) > 60)
                        die("bgrund still has running jobs after 60 s");
                usleep(20 * 1000);
        }
}
