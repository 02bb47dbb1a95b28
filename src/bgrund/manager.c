/* SPDX-License-Identifier: MIT */
/* The Manager object: each method reads its arguments, validates them,
 * authorizes the caller, acts, and replies. Validation comes before anything
 * is created, so bad input changes nothing. */
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>

#include "authority.h"
#include "build-config.h"
#include "bgrun/bus-api.h"
#include "bus-record.h"
#include "daemon.h"
#include "log.h"
#include "macro.h"
#include "job-listing.h"
#include "manager.h"
#include "privilege.h"

/* The kernel's MAX_ARG_STRLEN (128 KiB with the NUL): sh -c cannot take more. */
#define COMMAND_MAX (128 * 1024 - 1)
#define SESSION_MAX 256
#define PATH_MAX_LEN 4095
#define ENVIRONMENT_MAX_ENTRIES 1024
#define ENVIRONMENT_MAX_BYTES (128 * 1024)
#define READ_OUTPUT_MAX (4U * 1024U * 1024U)

#define invalid(error, ...) sd_bus_error_setf((error), BGRUN_ERROR_INVALID_ARGS, __VA_ARGS__)

static bool env_name_valid(const char *e, size_t len) {
        if (len == 0 || !(e[0] == '_' || (e[0] >= 'A' && e[0] <= 'Z') || (e[0] >= 'a' && e[0] <= 'z')))
                return false;
        for (size_t i = 1; i < len; i++)
                if (!(e[i] == '_' || (e[i] >= 'A' && e[i] <= 'Z') || (e[i] >= 'a' && e[i] <= 'z') ||
                      (e[i] >= '0' && e[i] <= '9')))
                        return false;
        return true;
}

static int read_environment(sd_bus_message *m, char ***ret, sd_bus_error *error) {
        _cleanup_strv_free_ char **env = NULL;
        int r = sd_bus_message_read_strv(m, &env);
        if (r < 0)
                return r;
        size_t n = 0, bytes = 0;
        for (char **e = env; e && *e; e++, n++) {
                const char *eq = strchr(*e, '=');
                if (!eq || !env_name_valid(*e, (size_t) (eq - *e)))
                        return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                                 "Environment entry %zu is not of the form NAME=VALUE with NAME of [A-Za-z0-9_]",
                                                 n + 1);
                bytes += strlen(*e) + 1;
        }
        if (n > ENVIRONMENT_MAX_ENTRIES || bytes > ENVIRONMENT_MAX_BYTES)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                         "Environment is too large (%zu entries, %zu bytes; at most %d and %d)", n,
                                         bytes, ENVIRONMENT_MAX_ENTRIES, ENVIRONMENT_MAX_BYTES);
        *ret = TAKE_PTR(env);
        return 0;
}

typedef struct LaunchOptions {
        uint64_t max_runtime_usec;
        char **environment;
        LaunchLimits limits;
        char *user;
} LaunchOptions;

static void launch_options_done(LaunchOptions *o) {
        strv_free(o->environment);
        free(o->user);
}

static const struct {
        const char *name;
        const char *signature;
} option_table[] = {
        { "MaxRuntimeUSec", "t" },
        { "Environment", "as" },
        { "MemoryMax", "t" },
        { "TasksMax", "t" },
        { "CPUQuotaPerSecUSec", "t" },
        { "User", "s" },
};

static int read_options(sd_bus_message *m, LaunchOptions *o, sd_bus_error *error) {
        unsigned seen = 0;
        int r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;

        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key, *contents;
                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;

                size_t i;
                for (i = 0; i < ELEMENTSOF(option_table); i++)
                        if (streq(key, option_table[i].name))
                                break;
                if (i == ELEMENTSOF(option_table))
                        return strlen(key) <= 64 ? invalid(error, "Unknown option '%s'", key)
                                                 : invalid(error, "Unknown option (a %zu-byte key)", strlen(key));
                if (seen & (1U << i))
                        return invalid(error, "Option %s given more than once", key);
                seen |= 1U << i;

                r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;
                if (!streq(contents, option_table[i].signature))
                        return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                                 "Option %s must be of type '%s', not '%s'", key,
                                                 option_table[i].signature, contents);
                r = sd_bus_message_enter_container(m, 'v', contents);
                if (r < 0)
                        return r;

                uint64_t t = 0;
                if (streq(option_table[i].signature, "t")) {
                        r = sd_bus_message_read(m, "t", &t);
                        if (r < 0)
                                return r;
                        if (t == 0)
                                return invalid(error, "Option %s must be greater than 0", key);
                }
                switch (i) {
                case 0: o->max_runtime_usec = t == UINT64_MAX ? 0 : t; break;
                case 1:
                        r = read_environment(m, &o->environment, error);
                        if (r < 0)
                                return r;
                        break;
                case 2: o->limits.memory_max = t; break;
                case 3: o->limits.tasks_max = t; break;
                case 4: o->limits.cpu_quota_per_sec_usec = t; break;
                case 5: {
                        const char *user;
                        r = sd_bus_message_read(m, "s", &user);
                        if (r < 0)
                                return r;
                        if (!*user || strlen(user) > 256)
                                return invalid(error, "Option User must be a user name");
                        o->user = strdup(user);
                        if (!o->user)
                                return -ENOMEM;
                        break;
                }
                }
                r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* Fill the spec's identity fields for the user the job runs as. */
static int resolve_user(JobSpec *spec, const char *name, uid_t uid, sd_bus_error *error) {
        char buf[16384];
        struct passwd pw, *found = NULL;
        int r = name ? getpwnam_r(name, &pw, buf, sizeof buf, &found) : getpwuid_r(uid, &pw, buf, sizeof buf, &found);
        if (r != 0 || !found) {
                if (name)
                        return invalid(error, "Option User: no such user '%s'", name);
                /* A uid without a passwd entry still runs, as itself. */
                char n[16];
                snprintf(n, sizeof n, "%u", (unsigned) uid);
                spec->uid = uid;
                spec->gid = (gid_t) uid;
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

static int method_launch(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        const char *command, *session, *cwd;
        _cleanup_(launch_options_done) LaunchOptions o = {};
        _cleanup_(job_spec_done) JobSpec spec = {};
        int r;

        r = sd_bus_message_read(m, "sss", &command, &session, &cwd);
        if (r < 0)
                return r;

        size_t len = strlen(command);
        if (len == 0)
                return invalid(error, "The command is empty");
        if (len > COMMAND_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                         "The command is %zu bytes long; at most %d bytes are allowed", len,
                                         COMMAND_MAX);
        if (strlen(session) > SESSION_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                         "The session name is longer than %d bytes", SESSION_MAX);
        if (cwd[0] != '/' || strlen(cwd) > PATH_MAX_LEN)
                return strlen(cwd) <= 256 ? invalid(error, "cwd '%s' is not an absolute path", cwd)
                                          : invalid(error, "cwd is not an absolute path");
        struct stat st;
        if (stat(cwd, &st) < 0)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS, "cwd '%s' does not exist: %s", cwd,
                                         strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return invalid(error, "cwd '%s' is not a directory", cwd);

        r = read_options(m, &o, error);
        if (r < 0)
                return r;

        uid_t uid;
        r = bus_caller_uid(m, &uid, error);
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

        return daemon_launch(d, m, &spec, &o.limits, error);
}

/* Read a method's leading job id argument and resolve it for the caller. */
static int read_job(Daemon *d, sd_bus_message *m, Job **ret, sd_bus_error *error) {
        const char *id;
        int r = sd_bus_message_read(m, "s", &id);
        return r < 0 ? r : bus_find_job(d, m, id, ret, error);
}

static int method_get(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Job *j;
        int r = read_job(userdata, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        return r < 0 ? r : job_reply_record(j, m);
}

static int compare_jobs(const void *a, const void *b) {
        const Job *x = *(Job *const *) a, *y = *(Job *const *) b;
        if (x->created_at != y->created_at)
                return x->created_at < y->created_at ? -1 : 1;
        return strcmp(x->id, y->id);
}

static int method_list_jobs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        const char *session;
        uid_t uid;
        int r = sd_bus_message_read(m, "s", &session);
        if (r >= 0)
                r = bus_caller_uid(m, &uid, error);
        if (r < 0)
                return r;

        /* Ask polkit only when it would change the answer: some job in the
         * session is someone else's. */
        bool others = false;
        size_t b;
        for (Job *j = job_table_first(&d->jobs, &b); j && !others; j = job_table_next(&d->jobs, &b, j))
                others = j->owner != uid && (!*session || streq(session, j->session_id));
        int admin = others ? caller_is_admin(d, m, uid) : 0;
        if (BUS_AUTH_PENDING(admin))
                return 1;
        _cleanup_free_ Job **list = calloc(d->jobs.n_jobs + 1, sizeof(Job *));
        if (!list)
                return -ENOMEM;
        size_t n = 0;
        for (Job *j = job_table_first(&d->jobs, &b); j; j = job_table_next(&d->jobs, &b, j))
                if ((admin || j->owner == uid) && (!*session || streq(session, j->session_id)))
                        list[n++] = j;
        qsort(list, n, sizeof(Job *), compare_jobs);

        r = job_listing_start(d, m, list, n);
        return r < 0 ? r : 1;
}

static int method_kill(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        Job *j;
        int r = read_job(d, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        return r < 0 ? r : job_kill(j, m, error);
}

static int method_read_output(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        uint64_t offset;
        uint32_t max;
        Job *j;
        int r = read_job(d, m, &j, error);
        if (r >= 0)
                r = sd_bus_message_read(m, "tu", &offset, &max);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        if (offset > INT64_MAX)
                return invalid(error, "offset is out of range");
        if (max > READ_OUTPUT_MAX)
                max = READ_OUTPUT_MAX;

        /* Whether the job ended is decided before reading, so "complete" is
         * never claimed for bytes written after the read. */
        bool ended = j->phase == JOB_PHASE_ENDED;
        _cleanup_close_ int fd = -EBADF;
        r = job_open_output(j, &fd);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot open the output of job %s: %m", j->id);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;

        _cleanup_free_ uint8_t *buf = malloc(max ? max : 1);
        if (!buf)
                return -ENOMEM;
        ssize_t n = max ? pread(fd, buf, max, (off_t) offset) : 0;
        if (n < 0)
                return sd_bus_error_set_errnof(error, errno, "Cannot read the output of job %s: %m", j->id);
        uint64_t next = offset + (uint64_t) n;
        bool complete = ended && next >= (uint64_t) st.st_size;

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0) r = sd_bus_message_append_array(reply, 'y', buf, (size_t) n);
        if (r >= 0) r = sd_bus_message_append(reply, "tb", next, (int) complete);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static int method_open_output(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        Job *j;
        int r = read_job(d, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        _cleanup_close_ int fd = -EBADF;
        r = job_open_output(j, &fd);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot open the output of job %s: %m", j->id);
        return sd_bus_reply_method_return(m, "h", fd);
}

static int method_wait(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        uint64_t timeout;
        Job *j;
        int r = read_job(d, m, &j, error);
        if (r >= 0)
                r = sd_bus_message_read(m, "t", &timeout);
        if (BUS_AUTH_PENDING(r))
                return 1;
        return r < 0 ? r : job_wait(j, m, timeout, error);
}

static int method_forget(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        Job *j;
        int r = read_job(d, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r >= 0)
                r = job_forget(j, error);
        return r < 0 ? r : sd_bus_reply_method_return(m, "");
}

static int method_reap(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        uid_t uid;
        int r = bus_caller_uid(m, &uid, error);
        if (r < 0)
                return r;
        r = caller_is_admin(d, m, uid);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r <= 0)
                return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED,
                                         "Request authority denied: Reap is for administrators");
        ReapCounts c;
        r = daemon_reap(d, &c);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, "a{sv}", 3, "background_kept", "u", c.background_kept, "released",
                                          "u", c.released, "orphans_killed", "u", c.orphans_killed);
}

static int property_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", BGRUN_VERSION);
}

static int property_mode(sd_bus *bus, const char *path, const char *interface, const char *property,
                         sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        return sd_bus_message_append(reply, "s", containment_mode_to_string(d->config.mode));
}

static int property_mechanisms(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        int r = sd_bus_message_open_container(reply, 'a', "s");
        for (unsigned i = 0; r >= 0 && i < d->config.n_mechanisms; i++)
                r = sd_bus_message_append(reply, "s", mechanism_to_string(d->config.mechanisms[i]));
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int property_running(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        return sd_bus_message_append(reply, "u", (uint32_t) d->n_running);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ContainmentMode", "s", property_mode, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Mechanisms", "as", property_mechanisms, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("RunningJobs", "u", property_running, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("Launch",
                                SD_BUS_ARGS("s", command, "s", session, "s", cwd, "a{sv}", options),
                                SD_BUS_RESULT("s", id, "o", job),
                                method_launch, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Get", SD_BUS_ARGS("s", id), SD_BUS_RESULT("a{sv}", record),
                                method_get, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListJobs", SD_BUS_ARGS("s", session), SD_BUS_RESULT("a(sssso)", jobs),
                                method_list_jobs, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Kill", SD_BUS_ARGS("s", id), SD_BUS_RESULT("a{sv}", result),
                                method_kill, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReadOutput", SD_BUS_ARGS("s", id, "t", offset, "u", max),
                                SD_BUS_RESULT("ay", data, "t", next, "b", complete),
                                method_read_output, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("OpenOutput", SD_BUS_ARGS("s", id), SD_BUS_RESULT("h", fd),
                                method_open_output, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Wait", SD_BUS_ARGS("s", id, "t", timeout_usec), SD_BUS_RESULT("a{sv}", record),
                                method_wait, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Forget", SD_BUS_ARGS("s", id), SD_BUS_NO_RESULT,
                                method_forget, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Reap", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", counts),
                                method_reap, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("JobNew", SD_BUS_ARGS("s", id, "o", job), 0),
        SD_BUS_SIGNAL_WITH_ARGS("JobRemoved", SD_BUS_ARGS("s", id, "o", job, "s", status), 0),
        SD_BUS_VTABLE_END
};

int manager_add_objects(Daemon *d) {
        return sd_bus_add_object_vtable(d->bus, NULL, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE, manager_vtable, d);
}

void manager_emit_running_jobs_changed(Daemon *d) {
        (void) sd_bus_emit_properties_changed(d->bus, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE, "RunningJobs",
                                              NULL);
}
