/* SPDX-License-Identifier: MIT */
#pragma once

/* The job store: one directory per job under the state directory,
 *   <state>/jobs/<id>/spec.json    JobSpec   (bgrund)
 *   <state>/jobs/<id>/run.json     JobRun    (supervisor)
 *   <state>/jobs/<id>/result.json  JobResult (supervisor, or bgrund's reaper)
 *   <state>/jobs/<id>/output       the command's stdout+stderr, as the supervisor
 *                                  relays it (output-store.h: with output.state
 *                                  and output.tail once past OutputMaxBytes=)
 *   <state>/jobs/<id>/teardown     JobTeardown (supervisor): an end from outside,
 *                                  as confirmed (job-teardown.h)
 *   <state>/jobs/<id>/queued       (empty; bgrund) the job waits in its owner's
 *                                  queue: nothing of it ran
 *   <state>/jobs/<id>/input        (bgrund) input written to a queued Stdin=pipe
 *   <state>/jobs/<id>/input.eof    job, and that its end was asked for: fed to
 *                                  the job's pipe once it runs (job-input.c)
 * Each event rewrites one small file of one job, crash-safe; nothing ever
 * rewrites the state of all jobs. Paths are only built from validated ids.
 *
 * The crash model, and what it costs on disk. A SIGKILL of bgrund or of a
 * supervisor leaves the page cache: every file written before it is there,
 * whole (written by rename), so no write needs an fsync for it. A power loss
 * leaves every job dead and every containment gone, so what must survive it
 * is only what an answer already told: that a job exists once Launch
 * answered (spec.json), how it ended once an end was reported (result.json),
 * and that it was killed, with which teardown, once a Kill or Stop answered
 * (the teardown slot). Hence one fsync before Launch answers, the spec's,
 * made by the supervisor while it is held and bgrund readies the
 * containment (job_store_sync_spec; the empty teardown slot is made just
 * before it, so its directory entry is as durable), one before an end is
 * reported, the result's, and for an end from outside one more before Kill
 * answers: a 4 KiB pwrite + fdatasync of the slot, no rename, no directory
 * sync. result.json follows within milliseconds and repeats the slot's
 * status and teardown; until then a reader takes them from the slot, and
 * one that finds only spec.json and the slot (a power loss, or a supervisor
 * killed in between) ends the job with them. run.json and grant.json speak
 * of processes and cgroups that a power loss takes with it: never synced.
 *
 * A queued job (Queue) is answered before any supervisor exists, so bgrund
 * makes it durable itself: the "queued" marker is made, then spec.json
 * synced (the marker's entry with it, as the teardown slot's), before Launch
 * answers. The marker goes, synced, just before the
 * job's held supervisor is let go, the one moment from which its command may
 * run. So a crash or power loss before that finds the marker and queues the
 * job again (its held supervisor, if any, ran nothing: it exits when its go
 * pipe closes with bgrund), and one after it finds a job without the marker
 * that may have run, which is settled as any live job is: never twice. */

#include <stdbool.h>
#include <stdint.h>

#include "build-config.h" /* BGRUN_STATE_DIR, from meson's localstatedir */
#include "job-record.h"

#define JOB_SPEC_FILE "spec.json"
#define JOB_RUN_FILE "run.json"
#define JOB_RESULT_FILE "result.json"
#define JOB_OUTPUT_FILE "output"
#define JOB_QUEUED_FILE "queued"
#define JOB_INPUT_FILE "input"
#define JOB_INPUT_EOF_FILE "input.eof"

/* Open (creating, 0700) <state_dir>/jobs. */
int job_store_open(const char *state_dir, int *ret_jobs_fd);

/* Create the job's directory, its empty output file and spec.json. Returns
 * the directory fd. On failure nothing is left behind. */
int job_store_create(int jobs_fd, const JobSpec *spec, int *ret_dir_fd);

/* Open an existing job's directory; -ENOENT for invalid ids too. */
int job_store_open_job(int jobs_fd, const char *id, int *ret_dir_fd);

int job_store_read_spec(int dir_fd, JobSpec *ret);
int job_store_read_run(int dir_fd, JobRun *ret);       /* -ENOENT until written */
int job_store_read_result(int dir_fd, JobResult *ret); /* -ENOENT while running */
int job_store_write_spec(int dir_fd, const JobSpec *spec); /* a changed mechanism */
int job_store_write_run(int dir_fd, const JobRun *run);
int job_store_write_result(int dir_fd, const JobResult *res); /* durable */

/* Make spec.json, and the job's directory with it, durable (the crash model
 * above): before anyone is told the job runs. */
int job_store_sync_spec(int dir_fd);

/* The queued marker (the crash model above): made durable with spec.json,
 * whether it is there, and gone durably before the command may run. */
int job_store_mark_queued(int dir_fd);
bool job_store_is_queued(int dir_fd);
int job_store_unmark_queued(int dir_fd);
/* A queued job that ended unstarted: its result, durable already and read
 * first at load, says so; the marker goes without a sync of its going. */
void job_store_unmark_queued_ended(int dir_fd);

/* The one way a job's record is finished: result.json first, then, only when
 * the teardown was confirmed (res->dead), the grant released. A reader that
 * finds a result therefore never finds a released grant without it. */
int job_store_finish(int dir_fd, const JobResult *res);

/* For a result already on disk: release its grant if the result says dead
 * and the grant is still open (its writer may have died in between). */
int job_store_settle_grant(int dir_fd, const JobResult *res);

/* output_bytes: what the job wrote, dropped bytes included (not the size of
 * any file). */
int job_store_output_size(int dir_fd, uint64_t *ret);
/* output_bytes, and output_dropped_bytes as the output's layout has them
 * now (what OutputMaxBytes= and KeepFree= dropped so far). */
int job_store_output_counts(int dir_fd, uint64_t *ret_bytes, uint64_t *ret_dropped);
/* What the job takes on disk now: its output (what is kept, and while the
 * job runs past its cap, up to the cap's tail more) and its record files,
 * which a command and environment of control bytes can make a MiB or more
 * (JSON writes each as six): what OutputMaxBytesPerUser= counts. */
int job_store_disk_size(int dir_fd, uint64_t *ret);

/* Remove a job's directory and everything in it, its output's room first
 * (output_store_release()). */
int job_store_remove(int jobs_fd, const char *id);
