/* SPDX-License-Identifier: MIT */
/* Validation comes before anything is created, so bad input changes
 * nothing. */
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "error-text.h"
#include "launch-request.h"
#include "macro.h"
#include "privilege.h"
#include "shell-words.h"
#include "time-util.h"

/* The kernel's MAX_ARG_STRLEN (128 KiB with the NUL): sh -c cannot take more. */
#define COMMAND_MAX (128 * 1024 - 1)
#define SESSION_MAX 256
#define PATH_MAX_LEN 4095

int launch_request_check(const LaunchRequest *req, char **ret_message) {
        size_t len = strlen(req->command);
        /* An empty one is Argv's (launch_request_spec() checks which). */
        if (len > COMMAND_MAX)
                return error_text(-EINVAL, ret_message, "The command is %zu bytes long; at most %d bytes are allowed", len,
                              COMMAND_MAX);
        if (strlen(req->session) > SESSION_MAX)
                return error_text(-EINVAL, ret_message, "The session name is longer than %d bytes", SESSION_MAX);
        if (req->cwd[0] != '/' || strlen(req->cwd) > PATH_MAX_LEN)
                return strlen(req->cwd) <= 256 ? error_text(-EINVAL, ret_message, "cwd '%s' is not an absolute path", req->cwd)
                                               : error_text(-EINVAL, ret_message, "cwd is not an absolute path");
        return 0;
}

int launch_request_runtime(const BgrunLimits *limits, uint64_t asked_usec, uint64_t *ret, char **ret_message) {
        uint64_t max = limits ? limits->max_runtime_usec : UINT64_MAX;
        if (asked_usec == 0) {
                uint64_t d = limits ? limits->default_max_runtime_usec : UINT64_MAX;
                *ret = d != UINT64_MAX ? d : max != UINT64_MAX ? max : 0;
                return 0;
        }
        if (max != UINT64_MAX && asked_usec > max) {
                char a[FORMAT_DURATION_MAX], m[FORMAT_DURATION_MAX];
                format_duration(a, sizeof a, asked_usec);
                format_duration(m, sizeof m, max);
                return error_text(BGRUN_ERROR(OVER_LIMIT), ret_message,
                              "MaxRuntimeUSec=%s is above MaxRuntimeSec=%s, the longest a job may run here; nothing was started",
                              a, m);
        }
        *ret = asked_usec == UINT64_MAX ? 0 : asked_usec; /* infinity: no limit */
        return 0;
}

/* Fill the spec's identity fields for the user the job runs as. */
static int resolve_user(JobSpec *spec, const char *name, uid_t uid, char **ret_message) {
        char buf[16384];
        struct passwd pw, *found = NULL;
        int r = name ? getpwnam_r(name, &pw, buf, sizeof buf, &found) : getpwuid_r(uid, &pw, buf, sizeof buf, &found);
        if (r != 0 || !found) {
                if (name)
                        return error_text(-EINVAL, ret_message, "Option User: no such user '%s'", name);
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
                return error_text(r, ret_message, "Cannot look up the groups of user %s: %s", spec->user, strerror(-r));
        spec->n_groups = (size_t) n;
        return 0;
}

int launch_request_command(const LaunchRequest *req, const LaunchOptions *o, char **ret_message) {
        bool argv = o->spec.argv;
        if (!argv && !req->command[0])
                return error_text(-EINVAL, ret_message, "The command is empty (a shell command line, or \"\" with Argv)");
        if (argv && req->command[0])
                return error_text(-EINVAL, ret_message, "The command must be \"\" with Argv: Argv is the command");
        return 0;
}

int launch_request_same(const LaunchRequest *req, const LaunchOptions *o, const char *job_id, const JobSpec *found,
                        char **ret_message) {
        const JobSpec *asked = &o->spec;
        bool same_command = !asked->argv == !found->argv &&
                            (asked->argv ? strv_equal(asked->argv, found->argv) : streq(req->command, found->command));
        bool same_sandbox = launch_options_same_sandbox(asked, found);
        if (same_command && same_sandbox)
                return 0;
        return error_text(-EINVAL, ret_message,
                      "RequestId '%s' launched job %s with another %s; nothing was started (a new request needs a new RequestId)",
                      asked->request_id, job_id,
                      !same_command ? (asked->argv || found->argv ? "Argv" : "command") : "sandbox");
}

int launch_request_spec(Runtime *rt, const LaunchRequest *req, LaunchOptions *o, JobSpec *spec, char **ret_message) {
        int r = launch_request_command(req, o, ret_message);
        if (r < 0)
                return r;
        /* The options' fields are the spec's: taken whole, defaults and all. */
        job_spec_done(spec);
        *spec = TAKE_STRUCT(o->spec);
        *o = (LaunchOptions) {};
        r = launch_request_runtime(rt ? &rt->config.limits : NULL, spec->max_runtime_usec, &spec->max_runtime_usec,
                                   ret_message);
        if (r < 0)
                return r;
        /* A caller that gave up before bgrund read its call: nothing runs
         * behind its back. Checked again before the supervisor is let go. */
        if (spec->launch_deadline_usec > 0 && now_realtime_usec() >= spec->launch_deadline_usec)
                return error_text(BGRUN_ERROR(DEADLINE_PASSED), ret_message,
                              "LaunchDeadlineUSec passed before the command could be started; nothing ran");
        /* spec->user is the name asked for (User=), or NULL: the caller. */
        _cleanup_free_ char *asked = TAKE_PTR(spec->user);
        r = resolve_user(spec, asked, req->uid, ret_message);
        if (r < 0)
                return r;
        /* In the session "" it would hold every job launched without one. */
        if (spec->max_parallel && !req->session[0])
                return error_text(-EINVAL, ret_message, "MaxParallel needs a session: \"\" is every job launched without one");
        spec->owner = req->uid;
        spec->session_id = strdup(req->session);
        /* With Argv, the command a record and a listing show: its words,
         * as the shell would need them written. */
        spec->command = spec->argv ? shell_quote_words(spec->argv) : strdup(req->command);
        spec->cwd = strdup(req->cwd);
        if (!spec->session_id || !spec->command || !spec->cwd)
                return -ENOMEM;
        /* Launched from inside a job of the same owner: that job's child. */
        Job *parent = req->pid > 0 ? runtime_job_of_process(rt, req->pid, req->uid) : NULL;
        if (parent)
                strcpy(spec->parent, parent->id);
        return 0;
}
