/* SPDX-License-Identifier: MIT */
/* Validation comes before anything is created, so bad input changes
 * nothing. */
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bgrun/bus-api.h"
#include "bus-args.h"
#include "bus-authority.h"
#include "bus-client.h"
#include "bus-launch.h"
#include "bus-pending.h"
#include "bus-service.h"
#include "log.h"
#include "privilege.h"

/* The kernel's MAX_ARG_STRLEN (128 KiB with the NUL): sh -c cannot take more. */
#define COMMAND_MAX (128 * 1024 - 1)
#define SESSION_MAX 256
#define PATH_MAX_LEN 4095

#define invalid(error, ...) sd_bus_error_setf((error), BGRUN_ERROR_INVALID_ARGS, __VA_ARGS__)
/* Fill the spec's identity fields for the user the job runs as. */
static int resolve_user(JobSpec *spec, const char *name, uid_t uid, sd_bus_error *error) {
        char buf[16384];
        struct passwd pw, *found = NULL;
        int r = name ? getpwnam_r(name, &pw, buf, sizeof buf, &found) : getpwuid_r(uid, &pw, buf, sizeof buf, &found);
        if (r != 0 || !found) {
                if (name)
                        return invalid(error, "Option User: no such user '%s'", name);
                /* A uid without a passwd entry still runs, as itself, but in
                 * no group it might not own: the overflow group, alone. */
                char n[16];
                snprintf(n, sizeof n, "%u", (unsigned) uid);
                spec->uid = uid;
                spec->gid = NO_GROUP_GID;
                spec->user = strdup(n);
                spec->home = strdup("/");
                spec->shell = strdup("/bin/sh");
        } else {
                spec->uid = found->pw_uid;
                spec->gid = found->pw_gid;
                spec->user = strdup(found->pw_name);
                spec->home = strdup(found->pw_dir && *found->pw_dir ? found->pw_dir : "/");
                spec->shell = strdup(found->pw_shell && *found->pw_shell ? found->pw_shell : "/bin/sh");
        }
        if (!spec->user || !spec->home || !spec->shell)
                return -ENOMEM;

        /* Resolved here, so the supervisor started per job needs no NSS. */
        int n;
        r = user_groups(found ? spec->user : NULL, spec->gid, &spec->groups, &n);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot look up the groups of user %s: %m", spec->user);
        spec->n_groups = (size_t) n;
        return 0;
}

static int check_arguments(const char *command, const char *session, const char *cwd, sd_bus_error *error) {
        size_t len = strlen(command);
        if (len == 0)
                return invalid(error, "The command is empty");
        if (len > COMMAND_MAX)
                return invalid(error, "The command is %zu bytes long; at most %d bytes are allowed", len, COMMAND_MAX);
        if (strlen(session) > SESSION_MAX)
                return invalid(error, "The session name is longer than %d bytes", SESSION_MAX);
        if (cwd[0] != '/' || strlen(cwd) > PATH_MAX_LEN)
                return strlen(cwd) <= 256 ? invalid(error, "cwd '%s' is not an absolute path", cwd)
                                          : invalid(error, "cwd is not an absolute path");
        return 0;
}

int bus_method_launch(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        const char *command, *session, *cwd;
        _cleanup_(launch_options_done) LaunchOptions o = {};
        _cleanup_(job_spec_done) JobSpec spec = {};
        int r;

        r = sd_bus_message_read(m, "sss", &command, &session, &cwd);
        if (r >= 0)
                r = check_arguments(command, session, cwd, error);
        if (r >= 0)
                r = bus_read_launch_options(m, &o, error);
        if (r < 0)
                return r;

        uid_t uid;
        pid_t pid;
        r = bus_caller_creds(m, &uid, &pid, error);
        if (r < 0)
                return r;
        if (o.user && uid != 0)
                return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED,
                                         "Request authority denied: only root may run a job as another user");

        r = resolve_user(&spec, o.user, uid, error);
        if (r < 0)
                return r;
        spec.owner = uid;
        spec.session_id = strdup(session);
        spec.command = strdup(command);
        spec.cwd = strdup(cwd);
        if (!spec.session_id || !spec.command || !spec.cwd)
                return -ENOMEM;
        spec.environment = TAKE_PTR(o.environment);
        spec.max_runtime_usec = o.max_runtime_usec;
        spec.stop_signal = o.stop_signal ?: LAUNCH_STOP_SIGNAL_DEFAULT;
        spec.stop_grace_usec = o.stop_grace_set ? o.stop_grace_usec : LAUNCH_STOP_GRACE_USEC_DEFAULT;
        spec.memory_max = o.limits.memory_max;
        spec.tasks_max = o.limits.tasks_max;
        spec.cpu_quota_per_sec_usec = o.limits.cpu_quota_per_sec_usec;
        spec.stdin_mode = o.tty ? JOB_STDIN_TTY : o.stdin_pipe ? JOB_STDIN_PIPE : JOB_STDIN_NULL;
        spec.tty_rows = o.tty_rows ?: JOB_TTY_ROWS_DEFAULT;
        spec.tty_columns = o.tty_columns ?: JOB_TTY_COLUMNS_DEFAULT;
        /* Launched from inside a job of the same owner: that job's child. */
        Job *parent = pid > 0 ? runtime_job_of_process(s->runtime, pid, uid) : NULL;
        if (parent)
                strcpy(spec.parent, parent->id);

        /* Launch waits for the job to run: the caller must have room. */
        r = bus_caller_may_wait(s, m, uid, error);
        if (r < 0)
                return r;

        Job *j;
        r = runtime_launch(s->runtime, &spec, &o.limits, &j);
        if (r == LAUNCH_NO_CONTAINMENT)
                return sd_bus_error_setf(error, BGRUN_ERROR_CONTAINMENT_REFUSED,
                                         "Containment mode is enforcing and no containing mechanism is available; nothing was run");
        if (r == LAUNCH_TOO_MANY_RUNNING)
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "MaxRunningJobs=%" PRIu64 " reached: uid %u has that many jobs running; nothing was started",
                                         s->runtime->config.limits.max_running_jobs, (unsigned) uid);
        if (r == LAUNCH_NO_SPACE)
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "KeepFree=%" PRIu64 " reached: the state's file system has less free; nothing was started",
                                         s->runtime->config.limits.keep_free);
        if (r == LAUNCH_OVER_DISK_BUDGET)
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "OutputMaxBytesPerUser=%" PRIu64 " reached: uid %u keeps that much on disk with this job's record, "
                                         "in running jobs; nothing was started",
                                         s->runtime->config.limits.output_max_bytes_per_user, (unsigned) uid);
        if (r == LAUNCH_START_FAILED)
                return sd_bus_error_setf(error, BGRUN_ERROR_CONTAINMENT_REFUSED,
                                         "No mechanism could start the job; nothing was run");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot create the job: %m");

        r = pending_call_add(s, j, PENDING_LAUNCH, m, 0, error);
        if (r < 0) {
                /* Nobody can be told about it: end it as a Kill would. */
                job_kill(j);
                return r;
        }
        return 1;
}
