/* SPDX-License-Identifier: MIT */
#pragma once

/* Containment mechanisms behind one table of operations, so the job
 * lifecycle (job.c) never branches on which one runs a job. Each lives in
 * its own file and is registered in containment.c:
 *   containment-systemd.c        a transient scope per job through
 *                                systemd's D-Bus API: contained
 *   containment-cgroupfs.c       a cgroup per job that bgrund makes in the
 *                                subtree it was started in: contained
 *   containment-process-group.c  a supervisor in its own session, the job
 *                                in its own process group: NOT contained
 *
 * A job starts like this, whatever the mechanism:
 *   1. describe() names the job's unit and cgroup; the spec and the grant
 *      record them before anything runs;
 *   2. prepare() says how its supervisor is to be spawned (held, pinned);
 *      job.c spawns it, held: it runs nothing yet;
 *   3. start() puts the supervisor's PID into its containment, and calls
 *      the host's ready() (or failed()) when done;
 *   4. verify() confirms the supervisor is inside; job.c lets it go.
 * A job whose supervisor is lost is released through kill(), is_empty()
 * and watch(); list() and kill_orphan() find what no record accounts for.
 * A mechanism sees a job only as a ContainmentJob and talks back through
 * the ContainmentHost the lifecycle gives it: containment/ includes nothing
 * of the lifecycle. */

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "job-record.h"
#include "macro.h"
#include "mechanism.h"
#include "pidref.h"

typedef struct Containment Containment;

/* A job as a mechanism starts it. */
typedef struct ContainmentJob {
        const char *id;
        const JobSpec *spec;
} ContainmentJob;

/* What the lifecycle gives the mechanisms: its loop, its configuration
 * (read at each use: it may change), and where a start's end and a pin's
 * end go. */
typedef struct ContainmentHost {
        sd_event *event;
        const BgrunConfig *config;
        bool user_instance;
        void *userdata;
        /* job_id's pinned supervisor may be reaped (SpawnPlan.pin). */
        void (*unpin)(void *userdata, const char *job_id);
        /* The start of job_id under mechanism m is done: its containment is
         * ready, or it failed (may_fall_back: another mechanism may try).
         * Nothing happens unless job_id still awaits m. */
        void (*ready)(void *userdata, const char *job_id, Mechanism m);
        void (*failed)(void *userdata, const char *job_id, Mechanism m, bool may_fall_back, const char *message);
} ContainmentHost;

/* How job.c spawns a job's supervisor for a mechanism. */
typedef struct SpawnPlan {
        /* Not reaped, even when it dies, until containment_unpin(): the
         * mechanism hands its PID by number to someone who may move it. */
        bool pin;
        /* Born inside this cgroup (clone3 with CLONE_INTO_CGROUP), or -EBADF;
         * the plan owns it. */
        int cgroup_fd;
} SpawnPlan;

#define SPAWN_PLAN_NULL ((SpawnPlan) { .cgroup_fd = -EBADF })

static inline void spawn_plan_done(SpawnPlan *p) {
        p->cgroup_fd = safe_close(p->cgroup_fd);
}

/* Every mechanism is registered, so that it can release and clean up what
 * an earlier configuration started under it; only the configured ones are
 * initialized (init() ran and succeeded). An op marked "needs init" works
 * on the mechanism's own state and runs only on an initialized mechanism;
 * the others work from what a job's grant and run.json name, and run on
 * any registered one (with no state, they do what can be done without it).
 * Callers go through the containment_*() functions below, which refuse an
 * op that may not run (-ENXIO) instead of calling it. */
typedef struct ContainmentOps {
        Mechanism mechanism;
        /* What a release records as teardown.method. */
        TeardownMethod teardown_method;

        /* Once at start: probe, connect, subscribe. A failure (logged, with
         * why) leaves the mechanism unavailable. */
        int (*init)(Containment *c);
        /* Needs init. */
        void (*done)(Containment *c);
        /* Needs init. Whether it can take a job now. */
        bool (*available)(Containment *c);

        /* Needs init. The unit and cgroup (v2 path) the job of spec (its id
         * and owner) gets under this mechanism now, "" for none; what the
         * spec, the grant and the record name. After a configuration
         * change this may differ from what a job got: its grant says that. */
        int (*describe)(Containment *c, const JobSpec *spec, char **ret_unit, char **ret_cgroup);
        /* Needs init. */
        int (*prepare)(Containment *c, const ContainmentJob *j, SpawnPlan *ret);
        /* Needs init. Put the held supervisor into j's containment. 1: ready
         * at once; 0: the host's ready() or failed() follows. */
        int (*start)(Containment *c, const ContainmentJob *j, pid_t supervisor);
        /* Needs init. 1 when the supervisor pid is inside j's containment,
         * 0 when not. */
        int (*verify)(Containment *c, const ContainmentJob *j, pid_t supervisor);

        /* Any registered. Kill every process of the job now: cgroup is the
         * one its grant names, run NULL when the command never ran.
         * *ret_handle is what to confirm with (-EBADF when the mechanism
         * needs none). -ENOENT: its containment is gone, nothing can be
         * left. */
        int (*kill)(Containment *c, const char *job_id, const char *cgroup, const JobRun *run, int *ret_handle);
        /* Any registered. 1 when nothing of the job is alive, 0 while
         * something is, < 0 when it cannot be told. */
        int (*is_empty)(Containment *c, const JobRun *run, int handle);
        /* Any registered. A cgroup.events watch (cgroup.h: it wakes with
         * CGROUP_EVENTS_WATCH_EVENTS, reading it re-arms it) for whenever
         * is_empty() may have changed; -EOPNOTSUPP where nothing tells
         * (is_empty() is then asked again and again). */
        int (*watch)(Containment *c, int handle, int *ret_fd);

        /* Any registered. Jobs whose containment exists and holds processes
         * now, for the reaper's orphan pass: their ids and cgroups, two
         * NULL-terminated lists of the same length. */
        int (*list)(Containment *c, char ***ret_ids, char ***ret_cgroups);
        /* Any registered. Kill what is left in a containment no live record
         * accounts for, without waiting for it. */
        int (*kill_orphan)(Containment *c, const char *cgroup);
        /* Any registered. The id of the job whose containment the cgroup (a
         * process's v2 path) is in: 1 and *ret_id, or 0 when it is in none
         * of this mechanism's. */
        int (*identify)(Containment *c, const char *cgroup, char ret_id[static JOB_ID_MAX]);
        /* Any registered, optional: the running supervisor of the job whose
         * grant names cgroup, found by where it is, for a job whose run.json
         * is unreadable. 1 and a pinned *ret, 0 when there is none or the
         * mechanism cannot tell (no cgroup). */
        int (*find_supervisor)(Containment *c, const char *cgroup, PidRef *ret);
        /* Any registered, optional: after a job's confirmed end, what is
         * left of the containment its grant names that nobody else collects
         * (the cgroups bgrund made itself; a scope whose supervisor bgrund
         * had to release). */
        void (*cleanup)(Containment *c, const char *cgroup, bool released);
        /* Needs init, optional: the cgroup v2 controllers a job's cgroup
         * has under this mechanism, space-separated as in
         * cgroup.subtree_control ("" for none, as on a hybrid host): a
         * limit whose controller is missing is recorded but not enforced
         * (limits_unenforced). Not set: the mechanism cannot say. */
        int (*controllers)(Containment *c, const char **ret);
} ContainmentOps;

struct Containment {
        const ContainmentOps *ops;
        const ContainmentHost *host;
        void *data;       /* the mechanism's own */
        bool initialized;
};

extern const ContainmentOps containment_systemd_ops;
extern const ContainmentOps containment_cgroupfs_ops;
extern const ContainmentOps containment_process_group_ops;

/* The registry: the ops of mechanism m, or NULL. */
const ContainmentOps *containment_ops(Mechanism m);

/* Register every mechanism in cs, and initialize those host's
 * configuration names. */
int containments_init(Containment cs[static _MECHANISM_MAX], const ContainmentHost *host);
void containments_done(Containment cs[static _MECHANISM_MAX]);

/* Available, and allowed by the containment mode. */
bool containment_usable(Containment *c);

/* The ops, for every caller: each runs the op only where containment.h
 * allows it, and answers -ENXIO (nothing for the void ones) where not. */
int containment_describe(Containment *c, const JobSpec *spec, char **ret_unit, char **ret_cgroup);
int containment_prepare(Containment *c, const ContainmentJob *j, SpawnPlan *ret);
int containment_start(Containment *c, const ContainmentJob *j, pid_t supervisor);
int containment_verify(Containment *c, const ContainmentJob *j, pid_t supervisor);
int containment_kill(Containment *c, const char *job_id, const char *cgroup, const JobRun *run, int *ret_handle);
int containment_is_empty(Containment *c, const JobRun *run, int handle);
int containment_watch(Containment *c, int handle, int *ret_fd);
int containment_list(Containment *c, char ***ret_ids, char ***ret_cgroups);
int containment_kill_orphan(Containment *c, const char *cgroup);
int containment_identify(Containment *c, const char *cgroup, char ret_id[static JOB_ID_MAX]);
int containment_find_supervisor(Containment *c, const char *cgroup, PidRef *ret);
/* After a confirmed end: cleanup() on the cgroup the job in dir_fd got, as
 * containment_job_cgroup() says, where the mechanism has one. */
void containment_cleanup(Containment *c, int dir_fd, const JobSpec *spec, bool released);

/* The cgroup the job in dir_fd got under c, as its grant names it; what c
 * would describe for spec now only where the grant names none of c's
 * (unreadable, or another mechanism's). */
int containment_job_cgroup(Containment *c, int dir_fd, const JobSpec *spec, char **ret);

/* For the mechanisms that give a job a cgroup of its own
 * (containment-cgroup.c): their kill (the handle is the cgroup's fd),
 * is_empty, watch and kill_orphan. */
int containment_cgroup_kill(Containment *c, const char *job_id, const char *cgroup, const JobRun *run,
                            int *ret_handle);
int containment_cgroup_is_empty(Containment *c, const JobRun *run, int handle);
int containment_cgroup_watch(Containment *c, int handle, int *ret_fd);
int containment_cgroup_kill_orphan(Containment *c, const char *cgroup);
/* For the mechanisms whose supervisor moves itself into "supervisor/" of
 * the job's cgroup: the one process there, pinned, run by bgrund's uid. */
int containment_cgroup_supervisor(const char *cgroup, PidRef *ret);
