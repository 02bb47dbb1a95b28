/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job-teardown.h"
#include "json-util.h"
#include "macro.h"

int job_teardown_to_json(const JobTeardown *t, char **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        int r = json_add_u64(o, "format", RECORD_FORMAT);
        if (r >= 0) r = json_add_str(o, "status", job_status_to_string(t->status));
        if (r >= 0) r = json_add_bool(o, "dead", t->dead);
        if (r >= 0) r = json_add_str(o, "method", teardown_method_to_string(t->method));
        if (r >= 0) r = json_add_u64(o, "confirmed_at", t->confirmed_at);
        return json_finish(o, r, ret);
}

int job_teardown_from_json(const char *json, JobTeardown *ret) {
        _cleanup_json_ json_object *o = NULL;
        int r = json_parse_object(json, &o);
        if (r < 0)
                return r;
        JobTeardown t = {};
        _cleanup_free_ char *status = NULL, *method = NULL;
        r = record_format_check(o);
        if (r >= 0) r = json_get_str(o, "status", &status);
        if (r >= 0) {
                /* Only an end from outside has a slot. */
                int s = job_status_from_string(status);
                if (s != JOB_KILLED && s != JOB_TIMED_OUT)
                        r = -EBADMSG;
                else
                        t.status = s;
        }
        if (r >= 0) r = json_get_bool(o, "dead", &t.dead);
        if (r >= 0) r = json_get_str(o, "method", &method);
        if (r >= 0) {
                int m = teardown_method_from_string(method);
                if (m <= TEARDOWN_NONE)
                        r = -EBADMSG;
                else
                        t.method = m;
        }
        if (r >= 0) r = json_get_u64(o, "confirmed_at", UINT64_MAX, &t.confirmed_at);
        if (r < 0)
                return r;
        *ret = t;
        return 0;
}

int job_teardown_lock(int dir_fd, bool wait, int *ret_fd) {
        _cleanup_close_ int fd = openat(dir_fd, JOB_TEARDOWN_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0)
                if (errno != EINTR)
                        return errno == EWOULDBLOCK ? -EAGAIN : negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int job_teardown_create_slot(int dir_fd) {
        int fd = openat(dir_fd, JOB_TEARDOWN_FILE, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return negative_errno();
        close(fd);
        return 0;
}

int job_teardown_prepare(int dir_fd) {
        _cleanup_close_ int lock_fd = -EBADF;
        int r = job_teardown_lock(dir_fd, false, &lock_fd);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        _cleanup_close_ int fd = openat(dir_fd, JOB_TEARDOWN_FILE, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size != 0)
                return 0; /* prepared, or written */
        static const char zeros[JOB_TEARDOWN_SLOT_SIZE] = {};
        if (pwrite(fd, zeros, sizeof zeros, 0) != (ssize_t) sizeof zeros)
                return errno > 0 ? negative_errno() : -EIO;
        return fdatasync(fd) < 0 ? negative_errno() : 0;
}

int job_teardown_write(int dir_fd, const JobTeardown *t) {
        _cleanup_free_ char *json = NULL;
        int r = job_teardown_to_json(t, &json);
        if (r < 0)
                return r;
        size_t n = strlen(json);
        if (n >= 512)
                return -E2BIG; /* one sector at most: see the header */
        char buf[JOB_TEARDOWN_SLOT_SIZE] = {};
        memcpy(buf, json, n);

        /* A slot made before there were slots (the job is older than this
         * supervisor): made now, and its directory entry synced too. */
        bool made = false;
        _cleanup_close_ int fd = openat(dir_fd, JOB_TEARDOWN_FILE, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) {
                fd = openat(dir_fd, JOB_TEARDOWN_FILE, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                made = true;
        }
        if (fd < 0)
                return negative_errno();
        if (pwrite(fd, buf, sizeof buf, 0) != (ssize_t) sizeof buf)
                return errno > 0 ? negative_errno() : -EIO;
        if (fdatasync(fd) < 0)
                return negative_errno();
        if (made && fsync(dir_fd) < 0)
                return negative_errno();
        return 0;
}

int job_teardown_read(int dir_fd, JobTeardown *ret) {
        _cleanup_close_ int fd = openat(dir_fd, JOB_TEARDOWN_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        char buf[JOB_TEARDOWN_SLOT_SIZE + 1];
        ssize_t n = pread(fd, buf, JOB_TEARDOWN_SLOT_SIZE, 0);
        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        /* Empty, or zeros: never written. A power loss during the one write
         * leaves the sector that holds the JSON whole or unwritten. */
        if (buf[0] == '\0')
                return -ENOENT;
        return job_teardown_from_json(buf, ret);
}
