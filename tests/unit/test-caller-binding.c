/* SPDX-License-Identifier: MIT */
/* A connection's bound jobs (dbus/caller-binding.c, the list its record in
 * bus-client.h holds), bus-free: binding, unbinding, the connection's loss
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

static void jobs_clearp(CallerJobs *l) {
        caller_jobs_clear(l);
}

static bool stopped(const Job *j) {
        return j->live->request == JOB_REQUEST_STOP;
}

Test(caller_binding, an_empty_list_has_nothing_and_loses_nothing) {
        _cleanup_(jobs_clearp) CallerJobs l = {};
        cr_assert_eq(caller_jobs_stop(&l, ":1.1"), 0);
        _cleanup_(job_unmakep) Job *j = job_make("a", SIGTERM, 1);
        /* Removing a job never bound: nothing, and nothing breaks. */
        cr_assert_null(caller_jobs_remove(j));
        cr_assert_null(j->caller_bound);
        cr_assert_eq(l.n, 0);
}

Test(caller_binding, add_then_remove) {
        _cleanup_(jobs_clearp) CallerJobs l = {}, other = {};
        _cleanup_(job_unmakep) Job *j = job_make("a", SIGTERM, 1);
        cr_assert_eq(caller_jobs_add(&l, j), 0);
        cr_assert_not_null(j->caller_bound);
        cr_assert_eq(j->caller_bound->job, j);
        cr_assert_eq(l.n, 1);
        /* A job is bound once. */
        cr_assert_eq(caller_jobs_add(&other, j), -EALREADY);
        cr_assert_eq(other.n, 0);
        cr_assert_null(other.head);
        cr_assert_eq(caller_jobs_remove(j), &l, "the list it left, so its record can go if empty");
        cr_assert_null(j->caller_bound);
        cr_assert_null(l.head);
        cr_assert_eq(l.n, 0);
        cr_assert_eq(caller_jobs_stop(&l, ":1.7"), 0);
        cr_assert(!stopped(j), "a job unbound before its caller left is not stopped");
        /* Bound again, to another connection, after its removal. */
        cr_assert_eq(caller_jobs_add(&other, j), 0);
        cr_assert_eq(other.n, 1);
}

Test(caller_binding, several_jobs_and_the_loss_stops_exactly_its_jobs) {
        _cleanup_(jobs_clearp) CallerJobs l = {}, other_list = {};
        _cleanup_(job_unmakep) Job *a1 = job_make("a1", SIGINT, 5000000);
        _cleanup_(job_unmakep) Job *a2 = job_make("a2", SIGHUP, 0);
        _cleanup_(job_unmakep) Job *a3 = job_make("a3", SIGTERM, 1000);
        _cleanup_(job_unmakep) Job *other = job_make("o", SIGTERM, 7);
        cr_assert_eq(caller_jobs_add(&l, a1), 0);
        cr_assert_eq(caller_jobs_add(&l, a2), 0);
        cr_assert_eq(caller_jobs_add(&other_list, other), 0);
        cr_assert_eq(caller_jobs_add(&l, a3), 0);
        cr_assert_eq(l.n, 3);

        /* The middle one ends: the others stay bound. */
        cr_assert_eq(caller_jobs_remove(a2), &l);
        cr_assert_null(a2->caller_bound);
        cr_assert_eq(l.n, 2);

        cr_assert_eq(caller_jobs_stop(&l, ":1.42"), 2);
        cr_assert(stopped(a1));
        cr_assert(stopped(a3));
        cr_assert(!stopped(a2), "a job removed before the loss");
        cr_assert(!stopped(other), "another connection's job");
        /* Each with its own signal and grace. */
        cr_assert_eq(a1->live->stop_signal, SIGINT);
        cr_assert_eq(a1->live->stop_grace_usec, 5000000);
        cr_assert_eq(a3->live->stop_signal, SIGTERM);
        cr_assert_eq(a3->live->stop_grace_usec, 1000);
        cr_assert_null(a1->caller_bound);
        cr_assert_null(a3->caller_bound);
        cr_assert_null(l.head);
        cr_assert_eq(l.n, 0);
        /* A second loss: nothing left to stop. */
        cr_assert_eq(caller_jobs_stop(&l, ":1.42"), 0);
        /* Removing a job the loss unbound already: nothing. */
        cr_assert_null(caller_jobs_remove(a1));
        cr_assert_not_null(other->caller_bound);
        cr_assert_eq(other_list.n, 1);
}

Test(caller_binding, a_job_that_ended_is_not_stopped_nor_counted) {
        _cleanup_(jobs_clearp) CallerJobs l = {};
        _cleanup_(job_unmakep) Job *running = job_make("r", SIGTERM, 1);
        _cleanup_(job_unmakep) Job *ended = job_make("e", SIGTERM, 1);
        _cleanup_(job_unmakep) Job *freed_live = job_make("f", SIGTERM, 1);
        cr_assert_eq(caller_jobs_add(&l, running), 0);
        cr_assert_eq(caller_jobs_add(&l, ended), 0);
        cr_assert_eq(caller_jobs_add(&l, freed_live), 0);
        /* Ended, still in the list (job_stop() would assert on it). */
        ended->state = JOB_STATE_ENDED; /* a fixture: no runtime to tell */
        free(freed_live->live);
        freed_live->live = NULL;
        cr_assert_eq(caller_jobs_stop(&l, ":1.5"), 1);
        cr_assert(stopped(running));
        cr_assert(!stopped(ended));
        cr_assert_null(ended->caller_bound);
        cr_assert_null(freed_live->caller_bound);
        cr_assert_eq(l.n, 0);
}

Test(caller_binding, a_stop_under_way_is_not_changed) {
        _cleanup_(jobs_clearp) CallerJobs l = {};
        _cleanup_(job_unmakep) Job *j = job_make("k", SIGINT, 9);
        j->live->request = JOB_REQUEST_KILL; /* a Kill came first */
        cr_assert_eq(caller_jobs_add(&l, j), 0);
        cr_assert_eq(caller_jobs_stop(&l, ":1.6"), 1);
        cr_assert_eq(j->live->request, JOB_REQUEST_KILL, "a kill under way is not turned into a stop");
}

/* Hundreds of connections with two jobs each: each loss stops its own jobs
 * and no other, O(its jobs). */
Test(caller_binding, many_connections) {
        enum { N = 600 };
        CallerJobs *lists = calloc(N, sizeof(CallerJobs));
        Job **jobs = calloc(2 * N, sizeof(Job *));
        cr_assert(lists && jobs);
        for (unsigned i = 0; i < N; i++) {
                jobs[2 * i] = job_make("x", SIGTERM, i);
                jobs[2 * i + 1] = job_make("y", SIGTERM, i);
                cr_assert_eq(caller_jobs_add(&lists[i], jobs[2 * i]), 0);
                cr_assert_eq(caller_jobs_add(&lists[i], jobs[2 * i + 1]), 0);
        }
        /* The odd ones end one job first, then lose their caller. */
        for (unsigned i = 1; i < N; i += 2)
                cr_assert_eq(caller_jobs_remove(jobs[2 * i]), &lists[i]);
        for (unsigned i = 0; i < N; i++) {
                cr_assert_eq(caller_jobs_stop(&lists[i], "c"), i % 2 ? 1 : 2, "%u", i);
                cr_assert_eq(stopped(jobs[2 * i]), i % 2 == 0, "%u", i);
                cr_assert(stopped(jobs[2 * i + 1]), "%u", i);
                cr_assert_eq(jobs[2 * i + 1]->live->stop_grace_usec, i, "%u: its own grace", i);
                /* No other connection's job was touched yet. */
                if (i + 1 < N)
                        cr_assert(!stopped(jobs[2 * (i + 1) + 1]), "%u", i);
        }
        for (unsigned i = 0; i < 2 * N; i++)
                job_unmake(jobs[i]);
        free(jobs);
        free(lists);
}

/* Clearing a list with jobs still bound frees every entry (the sanitizer
 * build's leak check) and does not look at the jobs. */
Test(caller_binding, clear_frees_what_is_bound) {
        CallerJobs l = {};
        _cleanup_(job_unmakep) Job *j1 = job_make("c1", SIGTERM, 1);
        _cleanup_(job_unmakep) Job *j2 = job_make("c2", SIGTERM, 1);
        cr_assert_eq(caller_jobs_add(&l, j1), 0);
        cr_assert_eq(caller_jobs_add(&l, j2), 0);
        caller_jobs_clear(&l);
        cr_assert_null(l.head);
        cr_assert_eq(l.n, 0);
        cr_assert(!stopped(j1) && !stopped(j2));
        /* A cleared list is usable again. */
        j1->caller_bound = NULL;
        cr_assert_eq(caller_jobs_add(&l, j1), 0);
        caller_jobs_clear(&l);
}
