/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>

#include "cgroup.h"
#include "fileio.h"
#include "job-usage.h"
#include "macro.h"

void job_usage_read_cgroup(int cgroup_fd, JobUsage *ret) {
        *ret = (JobUsage) {};
        _cleanup_free_ char *stat = NULL;
        if (read_file_at(cgroup_fd, "cpu.stat", 64 * 1024, &stat, NULL) >= 0) {
                /* "usage_usec N" opens the file; be exact about the key. */
                for (char *line = stat, *next; line && *line; line = next) {
                        next = strchr(line, '\n');
                        if (next)
                                *next++ = '\0';
                        uint64_t v;
                        if (sscanf(line, "usage_usec %" SCNu64, &v) == 1 && startswith_s(line, "usage_usec ")) {
                                ret->cpu_known = true;
                                ret->cpu_usage_usec = v;
                                break;
                        }
                }
        }
        _cleanup_free_ char *peak = NULL;
        uint64_t v;
        if (read_file_at(cgroup_fd, "memory.peak", 4096, &peak, NULL) >= 0 && sscanf(peak, "%" SCNu64, &v) == 1) {
                ret->memory_peak_known = true;
                ret->memory_peak = v;
        }
}

int job_usage_read_cgroup_path(const char *path, JobUsage *ret) {
        _cleanup_close_ int fd = -EBADF;
        int r = cgroup_open(path, &fd);
        if (r < 0)
                return r;
        job_usage_read_cgroup(fd, ret);
        return 0;
}

unsigned job_limits_unenforced(const JobSpec *spec, const char *controllers) {
        unsigned bits = 0;
        for (int l = 0; l < _JOB_LIMIT_MAX; l++)
                if (job_spec_has_limit(spec, l) &&
                    (!controllers || !cgroup_has_controller(controllers, job_limit_controller(l))))
                        bits |= 1U << l;
        return bits;
}

const char *job_limits_refusal(unsigned bits, char **buf) {
        size_t size = 0;
        FILE *f = open_memstream(buf, &size);
        if (!f)
                return "Limits asked for cannot be enforced in the job's cgroup; nothing was run";
        fputs("Limits asked for cannot be enforced in the job's cgroup, which has no controller for them: ", f);
        const char *sep = "";
        for (int l = 0; l < _JOB_LIMIT_MAX; l++)
                if (bits & (1U << l)) {
                        fprintf(f, "%s%s (%s)", sep, job_limit_to_string(l), job_limit_controller(l));
                        sep = ", ";
                }
        fputs("; nothing was run", f);
        if (fclose(f) != 0) {
                free(*buf);
                *buf = NULL;
                return "Limits asked for cannot be enforced in the job's cgroup; nothing was run";
        }
        return *buf;
}
