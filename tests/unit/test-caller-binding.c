/* SPDX-License-Identifier: MIT */
/* The table of bound jobs by their caller's connection name
 * (lifecycle/caller-binding.c), bus-free: binding, unbinding, a name's loss
 * stopping exactly its jobs with each one's own signal and grace, and
 * nothing kept once every job left. The jobs are starting ones, so the real
 * job_stop() only records the stop (a running job's would signal its
 * supervisor). The sanitizer build runs this too: no leak. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "caller-binding.h"
#include "job.h"
#include "macro.h"

/* A starting job with a stop signal and grace of its own. */
static Job *job_make(const char *id, int stop_signal, uint64_t grace_usec) {
        Job *j = calloc(1, sizeof(Job));
        cr_assert_not_null(j);
        snprintf(j->id, sizeof j->id, "%s", id);
        j->state = JOB_STATE_STARTING;
        j->live = calloc(1, sizeof(JobLive));
        cr_assert_not_null(j->live);
        j->live->spec.stop_signal = stop_signal;
        j->live->spec.stop_grace_usec = grace_usec;
        return j;
}

static void job_unmake(Job *j) {
        if (!j)
                return;
        free(j->live);
        free(j);
}

static void job_unmakep(Job **j) {
        job_unmake(*j);
}

static void bindings_clearp(CallerBindings *b) {
        caller_bindings_clear(b);
}

static bool stopped(const Job *j) {
        return j->live->request == JOB_REQUEST_STOP;
}

Test(caller_binding, an_empty_table_has_nothing_and_loses_nothing) {
        _cleanup_(bindings_clearp) CallerBindings b = {};
        cr_assert(!caller_bindings_has(&b, ":1.1"));
        cr_assert_eq(caller_bindings_gone(&b, ":1.1"), 0);
        _cleanup_(job_unmakep) Job *j = job_make("a", SIGTERM, 1);
        /* Removing a job never bound: nothing, and nothing breaks. */
        caller_bindings_remove(&b, j);
        cr_assert_null(j->caller_bound);
        cr_assert_eq(map_size(&b.names), 0);
}

Test(caller_binding, add_then_lookup_then_remove) {
        _cleanup_(bindings_clearp) CallerBindings b = {};
        _cleanup_(job_unmakep) Job *j = job_make("a", SIGTERM, 1);
        bool new = false;
        cr_assert_eq(caller_bindings_add(&b, j, ":1.7", &new), 0);
        cr_assert(new, "the first job of a name: a new name");
        cr_assert_not_null(j->caller_bound);
        cr_assert_eq(j->caller_bound->job, j);
        cr_assert(caller_bindings_has(&b, ":1.7"));
        cr_assert(!caller_bindings_has(&b, ":1.70"));
        cr_assert(!caller_bindings_has(&b, ":1.8"));
        cr_assert_eq(map_size(&b.names), 1);
        /* A job is bound once. */
        cr_assert_eq(caller_bindings_add(&b, j, ":1.8", &new), -EALREADY);
        cr_assert(!caller_bindings_has(&b, ":1.8"));
        caller_bindings_remove(&b, j);
        cr_assert_null(j->caller_bound);
        cr_assert(!caller_bindings_has(&b, ":1.7"), "a name with no job left is not kept");
        cr_assert_eq(map_size(&b.names), 0);
        cr_assert_eq(caller_bindings_gone(&b, ":1.7"), 0);
        cr_assert(!stopped(j), "a job unbound before its caller left is not stopped");
        /* Bound again, to another name, after its removal. */
        cr_assert_eq(caller_bindings_add(&b, j, ":1.9", NULL), 0);
        cr_assert(caller_bindings_has(&b, ":1.9"));
}

Test(caller_binding, several_jobs_per_name_and_the_loss_stops_exactly_its_jobs) {
        _cleanup_(bindings_clearp) CallerBindings b = {};
        _cleanup_(job_unmakep) Job *a1 = job_make("a1", SIGINT, 5000000);
        _cleanup_(job_unmakep) Job *a2 = job_make("a2", SIGHUP, 0);
        _cleanup_(job_unmakep) Job *a3 = job_make("a3", SIGTERM, 1000);
        _cleanup_(job_unmakep) Job *other = job_make("o", SIGTERM, 7);
        bool new = false;
        cr_assert_eq(caller_bindings_add(&b, a1, ":1.42", &new), 0);
        cr_assert(new);
        cr_assert_eq(caller_bindings_add(&b, a2, ":1.42", &new), 0);
        cr_assert(!new, "a second job of the same name: not a new name");
        cr_assert_eq(caller_bindings_add(&b, other, ":1.43", &new), 0);
        cr_assert(new);
        cr_assert_eq(caller_bindings_add(&b, a3, ":1.42", &new), 0);
        cr_assert(!new);
        cr_assert_eq(map_size(&b.names), 2);

        /* The middle one of its name ends: the others stay bound. */
        caller_bindings_remove(&b, a2);
        cr_assert_null(a2->caller_bound);
        cr_assert(caller_bindings_has(&b, ":1.42"));

        cr_assert_eq(caller_bindings_gone(&b, ":1.42"), 2);
        cr_assert(stopped(a1));
        cr_assert(stopped(a3));
        cr_assert(!stopped(a2), "a job removed before the loss");
        cr_assert(!stopped(other), "another name's job");
        /* Each with its own signal and grace. */
        cr_assert_eq(a1->live->stop_signal, SIGINT);
        cr_assert_eq(a1->live->stop_grace_usec, 5000000);
        cr_assert_eq(a3->live->stop_signal, SIGTERM);
        cr_assert_eq(a3->live->stop_grace_usec, 1000);
        cr_assert_null(a1->caller_bound);
        cr_assert_null(a3->caller_bound);
        cr_assert(!caller_bindings_has(&b, ":1.42"));
        cr_assert_eq(map_size(&b.names), 1);
        /* A second loss of the same name: nothing left to stop. */
        cr_assert_eq(caller_bindings_gone(&b, ":1.42"), 0);
        /* Removing a job the loss unbound already: nothing. */
        caller_bindings_remove(&b, a1);
        cr_assert_eq(map_size(&b.names), 1);
        cr_assert(caller_bindings_has(&b, ":1.43"));
        cr_assert_not_null(other->caller_bound);
}

Test(caller_binding, a_job_that_ended_is_not_stopped_nor_counted) {
        _cleanup_(bindings_clearp) CallerBindings b = {};
        _cleanup_(job_unmakep) Job *running = job_make("r", SIGTERM, 1);
        _cleanup_(job_unmakep) Job *ended = job_make("e", SIGTERM, 1);
        _cleanup_(job_unmakep) Job *freed_live = job_make("f", SIGTERM, 1);
        cr_assert_eq(caller_bindings_add(&b, running, ":1.5", NULL), 0);
        cr_assert_eq(caller_bindings_add(&b, ended, ":1.5", NULL), 0);
        cr_assert_eq(caller_bindings_add(&b, freed_live, ":1.5", NULL), 0);
        /* Ended, still in the table (job_stop() would assert on it). */
        ended->state = JOB_STATE_ENDED; /* a fixture: no runtime to tell */
        free(freed_live->live);
        freed_live->live = NULL;
        cr_assert_eq(caller_bindings_gone(&b, ":1.5"), 1);
        cr_assert(stopped(running));
        cr_assert(!stopped(ended));
        cr_assert_null(ended->caller_bound);
        cr_assert_null(freed_live->caller_bound);
        cr_assert_eq(map_size(&b.names), 0);
}

Test(caller_binding, a_stop_under_way_is_not_changed) {
        _cleanup_(bindings_clearp) CallerBindings b = {};
        _cleanup_(job_unmakep) Job *j = job_make("k", SIGINT, 9);
        j->live->request = JOB_REQUEST_KILL; /* a Kill came first */
        cr_assert_eq(caller_bindings_add(&b, j, ":1.6", NULL), 0);
        cr_assert_eq(caller_bindings_gone(&b, ":1.6"), 1);
        cr_assert_eq(j->live->request, JOB_REQUEST_KILL, "a kill under way is not turned into a stop");
}

/* Hundreds of names: the table grows, every name is found, each loss stops
 * its own job and no other, and the table is empty at the end. */
Test(caller_binding, many_names_grow_the_table) {
        enum { N = 600 }; /* 64 buckets, grown four times */
        _cleanup_(bindings_clearp) CallerBindings b = {};
        Job **jobs = calloc(2 * N, sizeof(Job *));
        cr_assert_not_null(jobs);
        char name[32];
        for (unsigned i = 0; i < N; i++) {
                snprintf(name, sizeof name, ":1.%u", i);
                bool new = false;
                jobs[2 * i] = job_make("x", SIGTERM, i);
                jobs[2 * i + 1] = job_make("y", SIGTERM, i);
                cr_assert_eq(caller_bindings_add(&b, jobs[2 * i], name, &new), 0);
                cr_assert(new, "%s", name);
                cr_assert_eq(caller_bindings_add(&b, jobs[2 * i + 1], name, &new), 0);
                cr_assert(!new, "%s", name);
        }
        cr_assert_eq(map_size(&b.names), N);
        cr_assert_geq(b.names.n_buckets, N);
        for (unsigned i = 0; i < N; i++) {
                snprintf(name, sizeof name, ":1.%u", i);
                cr_assert(caller_bindings_has(&b, name), "%s", name);
        }
        /* The odd names end one job first, then lose their caller. */
        for (unsigned i = 1; i < N; i += 2)
                caller_bindings_remove(&b, jobs[2 * i]);
        for (unsigned i = 0; i < N; i++) {
                snprintf(name, sizeof name, ":1.%u", i);
                cr_assert_eq(caller_bindings_gone(&b, name), i % 2 ? 1 : 2, "%s", name);
                cr_assert(!caller_bindings_has(&b, name), "%s", name);
                cr_assert_eq(stopped(jobs[2 * i]), i % 2 == 0, "%s", name);
                cr_assert(stopped(jobs[2 * i + 1]), "%s", name);
                cr_assert_eq(jobs[2 * i + 1]->live->stop_grace_usec, i, "%s: its own grace", name);
                /* No other name's job was touched yet. */
                if (i + 1 < N)
                        cr_assert(!stopped(jobs[2 * (i + 1) + 1]), "%s", name);
        }
        cr_assert_eq(map_size(&b.names), 0);
        for (unsigned i = 0; i < 2 * N; i++)
                job_unmake(jobs[i]);
        free(jobs);
}

/* Clearing a table with jobs still bound frees every entry (the sanitizer
 * build's leak check) and does not look at the jobs. */
Test(caller_binding, clear_frees_what_is_bound) {
        CallerBindings b = {};
        _cleanup_(job_unmakep) Job *j1 = job_make("c1", SIGTERM, 1);
        _cleanup_(job_unmakep) Job *j2 = job_make("c2", SIGTERM, 1);
        _cleanup_(job_unmakep) Job *j3 = job_make("c3", SIGTERM, 1);
        cr_assert_eq(caller_bindings_add(&b, j1, ":1.1", NULL), 0);
        cr_assert_eq(caller_bindings_add(&b, j2, ":1.1", NULL), 0);
        cr_assert_eq(caller_bindings_add(&b, j3, ":1.2", NULL), 0);
        caller_bindings_clear(&b);
        cr_assert_null(b.names.buckets);
        cr_assert_eq(map_size(&b.names), 0);
        cr_assert_eq(b.names.n_buckets, 0);
        cr_assert(!caller_bindings_has(&b, ":1.1"));
        cr_assert(!stopped(j1) && !stopped(j2) && !stopped(j3));
        /* A cleared table is usable again. */
        j1->caller_bound = NULL;
        cr_assert_eq(caller_bindings_add(&b, j1, ":1.1", NULL), 0);
        caller_bindings_clear(&b);
}
