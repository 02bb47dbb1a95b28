/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "grant.h"
#include "job-store.h"
#include "job-teardown.h"
#include "macro.h"
#include "output-store.h"
#include "reaper.h"

/* A record is small; the cap only guards against a corrupted or hostile file. */
#define RECORD_MAX (4U * 1024U * 1024U)

int job_store_open(const char *state_dir, int *ret_jobs_fd) {
        /* systemd's StateDirectory= makes it under /var/lib; a build with
         * another localstatedir finds none there. */
        if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        _cleanup_close_ int state_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0)
                return negative_errno();
        if (mkdirat(state_fd, "jobs", 0700) < 0 && errno != EEXIST)
                return negative_errno();
        int fd = openat(state_fd, "jobs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_jobs_fd = fd;
        return 0;
}

int job_store_open_job(int jobs_fd, const char *id, int *ret_dir_fd) {
        if (!job_id_is_valid(id))
                return -ENOENT;
        int fd = openat(jobs_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_dir_fd = fd;
        return 0;
}

static int populate_job_dir(int jobs_fd, const char *id, const char *spec_json, int *ret_dir_fd) {
        _cleanup_close_ int dir_fd = openat(jobs_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0)
                return negative_errno();

        _cleanup_close_ int out = openat(dir_fd, JOB_OUTPUT_FILE,
                                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0)
                return negative_errno();

        int r = write_file_atomic_at(dir_fd, JOB_SPEC_FILE, spec_json, strlen(spec_json), 0600, 0);
        if (r < 0)
                return r;

        *ret_dir_fd = TAKE_FD(dir_fd);
        return 0;
}

int job_store_create(int jobs_fd, const JobSpec *spec, int *ret_dir_fd) {
        if (!job_id_is_valid(spec->id))
                return -EINVAL;

        _cleanup_free_ char *json = NULL;
        int r = job_spec_to_json(spec, &json);
        if (r < 0)
                return r;

        if (mkdirat(jobs_fd, spec->id, 0700) < 0)
                return negative_errno();

        r = populate_job_dir(jobs_fd, spec->id, json, ret_dir_fd);
        if (r < 0)
                (void) rm_rf_at(jobs_fd, spec->id);
        return r;
}

static int read_record(int dir_fd, const char *name, char **ret) {
        return read_file_at(dir_fd, name, RECORD_MAX, ret, NULL);
}

int job_store_read_spec(int dir_fd, JobSpec *ret) {
        _cleanup_free_ char *json = NULL;
        int r = read_record(dir_fd, JOB_SPEC_FILE, &json);
        return r < 0 ? r : job_spec_from_json(json, ret);
}

int job_store_read_run(int dir_fd, JobRun *ret) {
        _cleanup_free_ char *json = NULL;
        int r = read_record(dir_fd, JOB_RUN_FILE, &json);
        return r < 0 ? r : job_run_from_json(json, ret);
}

int job_store_read_result(int dir_fd, JobResult *ret) {
        _cleanup_free_ char *json = NULL;
        int r = read_record(dir_fd, JOB_RESULT_FILE, &json);
        return r < 0 ? r : job_result_from_json(json, ret);
}

int job_store_write_spec(int dir_fd, const JobSpec *spec) {
        _cleanup_free_ char *json = NULL;
        int r = job_spec_to_json(spec, &json);
        return r < 0 ? r : write_file_atomic_at(dir_fd, JOB_SPEC_FILE, json, strlen(json), 0600, 0);
}

int job_store_write_run(int dir_fd, const JobRun *run) {
        _cleanup_free_ char *json = NULL;
        int r = job_run_to_json(run, &json);
        return r < 0 ? r : write_file_atomic_at(dir_fd, JOB_RUN_FILE, json, strlen(json), 0600, 0);
}

int job_store_write_result(int dir_fd, const JobResult *res) {
        _cleanup_free_ char *json = NULL;
        int r = job_result_to_json(res, &json);
        return r < 0 ? r : write_file_atomic_at(dir_fd, JOB_RESULT_FILE, json, strlen(json), 0600, WRITE_FILE_DURABLE);
}

int job_store_sync_spec(int dir_fd) {
        return sync_file_at(dir_fd, JOB_SPEC_FILE);
}

int job_store_mark_queued(int dir_fd) {
        _cleanup_close_ int fd = openat(dir_fd, JOB_QUEUED_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return negative_errno();
        /* Made just before the spec's sync, its directory entry is as
         * durable as the spec's (the crash model above). */
        int r = job_store_sync_spec(dir_fd);
        if (r < 0)
                (void) unlinkat(dir_fd, JOB_QUEUED_FILE, 0);
        return r;
}

bool job_store_is_queued(int dir_fd) {
        return faccessat(dir_fd, JOB_QUEUED_FILE, F_OK, AT_SYMLINK_NOFOLLOW) >= 0;
}

int job_store_unmark_queued(int dir_fd) {
        if (unlinkat(dir_fd, JOB_QUEUED_FILE, 0) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return fsync(dir_fd) < 0 ? negative_errno() : 0;
}

void job_store_unmark_queued_ended(int dir_fd) {
        (void) unlinkat(dir_fd, JOB_QUEUED_FILE, 0);
}

int job_store_settle_grant(int dir_fd, const JobResult *res) {
        _cleanup_(grant_done) Grant g = {};
        int r = grant_read(dir_fd, &g);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        bool release = reap_release_grant(g.state == GRANT_OPEN, res->dead);
        return release ? grant_release_read(dir_fd, &g, res->method) : 0;
}

int job_store_finish(int dir_fd, const JobResult *res) {
        int r = job_store_write_result(dir_fd, res);
        return r < 0 ? r : job_store_settle_grant(dir_fd, res);
}

int job_store_output_counts(int dir_fd, uint64_t *ret_bytes, uint64_t *ret_dropped) {
        OutputLayout l;
        int r = output_store_layout(dir_fd, &l);
        if (r < 0)
                return r;
        *ret_bytes = l.total;
        *ret_dropped = output_layout_dropped(&l);
        return 0;
}

int job_store_output_size(int dir_fd, uint64_t *ret) {
        uint64_t dropped;
        return job_store_output_counts(dir_fd, ret, &dropped);
}

int job_store_disk_size(int dir_fd, uint64_t *ret) {
        static const char *const records[] = { JOB_SPEC_FILE, JOB_RUN_FILE, JOB_RESULT_FILE, GRANT_FILE, JOB_TEARDOWN_FILE,
                                               JOB_INPUT_FILE };
        uint64_t sum = 0;
        int r = output_store_disk_size(dir_fd, &sum);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(records); i++) {
                struct stat st;
                if (fstatat(dir_fd, records[i], &st, AT_SYMLINK_NOFOLLOW) >= 0)
                        sum += (uint64_t) st.st_size;
        }
        *ret = sum;
        return 0;
}

int job_store_remove(int jobs_fd, const char *id) {
        if (!job_id_is_valid(id))
                return -ENOENT;
        _cleanup_close_ int dir_fd = openat(jobs_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd >= 0)
                output_store_release(dir_fd);
        return rm_rf_at(jobs_fd, id);
}
