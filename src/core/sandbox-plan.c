/* SPDX-License-Identifier: MIT */
/* The file-system sandbox's plan: the options' paths, and what ProtectSystem
 * and ProtectHome imply, as one list of mounts sorted parent first, with
 * what each must do and what its parents did already. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "error-text.h"
#include "sandbox-plan.h"

const char *const sandbox_common_mechanisms[] = {
        "mount-namespace", "ipc-namespace", "landlock", "seccomp-unotify", NULL,
};

LaunchOption sandbox_first_option(const JobSpec *s) {
        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++)
                if ((launch_options[i].flags & (LAUNCH_SANDBOX | LAUNCH_SANDBOX_MODIFIER)) == LAUNCH_SANDBOX &&
                    launch_option_is_set(i, s))
                        return i;
        return _LAUNCH_OPTION_MAX;
}

bool sandbox_requested(const JobSpec *s) {
        return sandbox_first_option(s) < _LAUNCH_OPTION_MAX;
}

void sandbox_plan_done(SandboxPlan *p) {
        for (size_t i = 0; p->mounts && i < p->n_mounts; i++)
                free(p->mounts[i].path);
        free(p->mounts);
        *p = (SandboxPlan) {};
}

/* p without its '-', its doubled and its trailing slashes. */
static char *normalized(const char *p) {
        if (*p == '-')
                p++;
        char *n = malloc(strlen(p) + 1), *w = n;
        if (!n)
                return NULL;
        for (; *p; p++)
                if (!(*p == '/' && w > n && w[-1] == '/'))
                        *w++ = *p;
        if (w > n + 1 && w[-1] == '/')
                w--;
        *w = '\0';
        return n;
}

/* Path order with '/' before every other byte, so that a path's children
 * follow it at once ("/a", "/a/b", "/a-b"). */
static int path_compare(const char *a, const char *b) {
        for (;; a++, b++) {
                unsigned char x = *a == '/' ? 1 : (unsigned char) *a, y = *b == '/' ? 1 : (unsigned char) *b;
                if (x != y || !x)
                        return (int) x - (int) y;
        }
}

/* Whether path is parent or below it. */
static bool path_is_below(const char *path, const char *parent) {
        if (streq(parent, "/"))
                return true;
        size_t n = strlen(parent);
        return strncmp(path, parent, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Which of two entries for one path wins: a path option over what
 * ProtectSystem and ProtectHome imply, then inaccessible over read-only
 * over read-write. */
static unsigned rank(const SandboxMount *m) {
        bool implied = m->option == LAUNCH_OPTION_PROTECT_SYSTEM || m->option == LAUNCH_OPTION_PROTECT_HOME;
        unsigned mode = m->mode == SANDBOX_TMPFS || m->mode == SANDBOX_DEV ? SANDBOX_INACCESSIBLE : m->mode;
        return (m->exit ? 8 : implied ? 0 : 4) + mode; /* an exit is never opened again */
}

static int compare_mounts(const void *a, const void *b) {
        const SandboxMount *x = a, *y = b;
        int c = path_compare(x->path, y->path);
        if (c != 0)
                return c;
        /* The winner first; then the option's order, to be deterministic. */
        unsigned rx = rank(x), ry = rank(y);
        if (rx != ry)
                return rx > ry ? -1 : 1;
        return x->option != y->option ? (x->option < y->option ? -1 : 1) : (x->entry < y->entry ? -1 : x->entry > y->entry);
}

static int add_full(SandboxPlan *p, char *path, SandboxMode mode, bool optional, bool exit, LaunchOption option,
                    unsigned entry) {
        assert(p->n_mounts < SANDBOX_MOUNTS_MAX);
        if (!path)
                return -ENOMEM;
        p->mounts[p->n_mounts++] = (SandboxMount) {
                .path = path, .mode = mode, .optional = optional, .exit = exit, .option = option, .entry = entry,
        };
        return 0;
}

static int add(SandboxPlan *p, const char *path, SandboxMode mode, bool optional, LaunchOption option, unsigned entry) {
        return add_full(p, normalized(path), mode, optional, false, option, entry);
}

/* The ways out of a sandbox that a mount can close: sockets that start
 * work outside it, hidden (connect() needs no write access to the file
 * system, so read-only is not enough); the cgroup tree, read-only, so that
 * no process moves itself out; and the kernel's settings, read-only, as
 * systemd's ProtectKernelTunables= has them, so that a job of root's (which
 * may write root's files with no capability) sets no core_pattern,
 * uevent_helper or sysrq that the kernel would act on outside the sandbox;
 * and /dev, one of the job's own (not systemd's PrivateDevices=, which
 * binds the host's /dev/pts: the user's terminals, readable and writable).
 * Signals, ptrace and abstract sockets are Landlock's (sandbox-apply.c).
 * All optional: what a host lacks needs no closing. */
static int add_exits(SandboxPlan *p, const JobSpec *s, const char *state_dir) {
        static const struct {
                const char *path;
                SandboxMode mode;
        } exits[] = {
                { "/run/dbus/system_bus_socket", SANDBOX_INACCESSIBLE }, /* the system bus: bgrund, systemd, everyone */
                { "/run/systemd/private", SANDBOX_INACCESSIBLE },        /* systemctl's way to PID 1 */
                { "/run/bgrun", SANDBOX_INACCESSIBLE },                  /* bgrund --listen's */
                { "/dev", SANDBOX_DEV },                                 /* the host's terminals, disks, kmsg */
                { "/sys", SANDBOX_READ_ONLY },                           /* the cgroup tree, and the kernel's */
                { "/proc/sys", SANDBOX_READ_ONLY },
                { "/proc/sysrq-trigger", SANDBOX_READ_ONLY },
        };
        LaunchOption first = sandbox_first_option(s);
        int r = 0;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(exits); i++)
                r = add_full(p, strdup(exits[i].path), exits[i].mode, true, true, first, 0);
        /* The user's runtime directory: not only the session bus and the
         * user's systemd live there, but every daemon of the user's that
         * takes work over a socket (podman's and a rootless docker's, gpg's
         * agent). An empty tmpfs of the job's own over it, so that programs
         * still find an XDG_RUNTIME_DIR to write. */
        char *runtime = NULL;
        if (r >= 0 && asprintf(&runtime, "/run/user/%u", (unsigned) s->uid) < 0)
                return -ENOMEM;
        if (r >= 0)
                r = add_full(p, runtime, SANDBOX_TMPFS, true, true, first, 0);
        /* The job store: every job's control socket (its input) is there. */
        if (r >= 0 && state_dir)
                r = add_full(p, normalized(state_dir), SANDBOX_INACCESSIBLE, true, true, first, 0);
        return r;
}

static int add_implied(SandboxPlan *p, const JobSpec *s) {
        static const char *const system_paths[_PROTECT_SYSTEM_MAX][4] = {
                [PROTECT_SYSTEM_YES] = { "/usr", "/boot", "/efi" },
                [PROTECT_SYSTEM_FULL] = { "/usr", "/boot", "/efi", "/etc" },
                [PROTECT_SYSTEM_STRICT] = { "/" },
        };
        /* strict: the API file systems stay as the host has them (/dev is
         * the job's own in every sandbox: add_exits()). */
        static const char *const api_paths[] = { "/proc", "/sys" };
        static const char *const home_paths[] = { "/home", "/root", "/run/user" };
        static const SandboxMode home_modes[_PROTECT_HOME_MAX] = {
                [PROTECT_HOME_YES] = SANDBOX_INACCESSIBLE,
                [PROTECT_HOME_READ_ONLY] = SANDBOX_READ_ONLY,
                [PROTECT_HOME_TMPFS] = SANDBOX_TMPFS,
        };
        int r = 0;
        for (size_t i = 0; r >= 0 && s->protect_system < _PROTECT_SYSTEM_MAX && i < 4 &&
                           system_paths[s->protect_system][i]; i++)
                r = add(p, system_paths[s->protect_system][i], SANDBOX_READ_ONLY, true, LAUNCH_OPTION_PROTECT_SYSTEM, 0);
        for (size_t i = 0; r >= 0 && s->protect_system == PROTECT_SYSTEM_STRICT && i < ELEMENTSOF(api_paths); i++)
                r = add(p, api_paths[i], SANDBOX_READ_WRITE, true, LAUNCH_OPTION_PROTECT_SYSTEM, 0);
        for (size_t i = 0; r >= 0 && s->protect_home != PROTECT_HOME_NO && s->protect_home < _PROTECT_HOME_MAX &&
                           i < ELEMENTSOF(home_paths); i++)
                r = add(p, home_paths[i], home_modes[s->protect_home], true, LAUNCH_OPTION_PROTECT_HOME, 0);
        return r;
}

/* How the caller wrote m: "ReadWritePaths=/a" or "ProtectHome=yes". */
static void describe(const SandboxMount *m, const JobSpec *s, char *buf, size_t size) {
        const LaunchOptionInfo *o = &launch_options[m->option];
        if (m->exit)
                snprintf(buf, size, "the sandbox (%.256s)", m->path);
        else if (o->type == LAUNCH_VALUE_CHOICE) {
                unsigned v = m->option == LAUNCH_OPTION_PROTECT_SYSTEM ? s->protect_system : s->protect_home;
                snprintf(buf, size, "%s=%s", o->name, launch_option_word(m->option, v));
        } else
                snprintf(buf, size, "%s=%.256s", o->name, (*(char **const *) ((const char *) s + o->offset))[m->entry]);
}

/* settle() stopped at mount i with kept mounts settled: the rest freed. */
static int settle_stopped(SandboxPlan *p, size_t i, size_t kept, int r) {
        for (size_t k = i; k < p->n_mounts; k++)
                free(p->mounts[k].path);
        p->n_mounts = kept;
        return r;
}

/* Each mount's work, given its parents': the nearest one decides. */
static int settle(SandboxPlan *p, const JobSpec *s, char **ret_error) {
        size_t kept = 0;
        for (size_t i = 0; i < p->n_mounts; i++) {
                SandboxMount *m = &p->mounts[i];
                /* At an equal path the first (the winner) stays. */
                if (kept > 0 && streq(p->mounts[kept - 1].path, m->path)) {
                        free(m->path);
                        continue;
                }
                const SandboxMount *parent = NULL;
                for (size_t k = kept; k > 0 && !parent; k--)
                        if (path_is_below(m->path, p->mounts[k - 1].path))
                                parent = &p->mounts[k - 1];
                /* A device asked for below the job's own /dev is bound in
                 * with it (an inaccessible one is simply not there). */
                if (parent && parent->mode == SANDBOX_DEV && !m->exit) {
                        if (m->mode == SANDBOX_INACCESSIBLE || m->mode == SANDBOX_TMPFS) {
                                free(m->path);
                                continue;
                        }
                        m->in_dev = true;
                        m->apply = false;
                        p->mounts[kept++] = *m;
                        continue;
                }
                bool hidden = parent && (parent->mode == SANDBOX_INACCESSIBLE || parent->mode == SANDBOX_TMPFS);
                if (hidden && (m->mode == SANDBOX_INACCESSIBLE || m->optional)) {
                        /* Nothing to do: it is hidden with its parent. */
                        free(m->path);
                        continue;
                }
                /* Inside an exit it is looked up, and not found, as a path
                 * the job's user cannot reach: the same answer. */
                if (hidden && !parent->exit) {
                        char what[300], where[300];
                        describe(m, s, what, sizeof what);
                        describe(parent, s, where, sizeof where);
                        return settle_stopped(p, i, kept, error_text(-EINVAL, ret_error, "%s lies inside what %s hides: nothing beneath it can be reached",
                                                                 what, where));
                }
                /* The cgroup tree and the kernel's settings stay read-only,
                 * whatever a path option asks. */
                if (parent && parent->exit && parent->mode == SANDBOX_READ_ONLY && m->mode == SANDBOX_READ_WRITE) {
                        char what[300];
                        describe(m, s, what, sizeof what);
                        return settle_stopped(p, i, kept, error_text(-EINVAL, ret_error, "%s lies inside %s, which every sandbox keeps read-only",
                                                                 what, parent->path));
                }
                SandboxMode above = parent ? parent->mode : SANDBOX_READ_WRITE;
                /* A writable path is a mount of its own even below a
                 * writable parent (sandbox-plan.h). */
                m->apply = m->mode != SANDBOX_READ_ONLY || m->mode != above;
                p->mounts[kept++] = *m;
        }
        p->n_mounts = kept;
        return 0;
}

int sandbox_plan_build(const JobSpec *s, const char *state_dir, SandboxPlan *ret, char **ret_error) {
        static const struct { LaunchOption option; SandboxMode mode; } path_options[] = {
                { LAUNCH_OPTION_READ_WRITE_PATHS, SANDBOX_READ_WRITE },
                { LAUNCH_OPTION_READ_ONLY_PATHS, SANDBOX_READ_ONLY },
                { LAUNCH_OPTION_INACCESSIBLE_PATHS, SANDBOX_INACCESSIBLE },
        };
        _cleanup_(sandbox_plan_done) SandboxPlan p = { .mounts = calloc(SANDBOX_MOUNTS_MAX, sizeof(SandboxMount)) };
        if (!p.mounts)
                return -ENOMEM;
        int r = add_implied(&p, s);
        if (r >= 0 && sandbox_requested(s))
                r = add_exits(&p, s, state_dir);
        for (size_t k = 0; r >= 0 && k < ELEMENTSOF(path_options); k++) {
                const LaunchOptionInfo *o = &launch_options[path_options[k].option];
                char **paths = *(char **const *) ((const char *) s + o->offset);
                for (unsigned e = 0; r >= 0 && paths && paths[e] && e < LAUNCH_PATHS_MAX; e++)
                        r = add(&p, paths[e], path_options[k].mode, paths[e][0] == '-', path_options[k].option, e);
        }
        if (r < 0)
                return r;
        qsort(p.mounts, p.n_mounts, sizeof *p.mounts, compare_mounts);
        r = settle(&p, s, ret_error);
        if (r < 0)
                return r;
        *ret = p;
        p = (SandboxPlan) {};
        return 0;
}
