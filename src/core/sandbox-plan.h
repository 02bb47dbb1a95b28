/* SPDX-License-Identifier: MIT */
#pragma once

/* A job's file-system sandbox as a list of mounts: what ProtectSystem,
 * ProtectHome, ReadWritePaths, ReadOnlyPaths and InaccessiblePaths ask for,
 * with systemd.exec(5)'s meanings, planned here (allocation, sorting, the
 * rules between paths) so that the command's own process applies it with
 * system calls only (supervisor/sandbox-apply.c). bgrund builds the plan
 * too, at Launch, so that a plan that cannot be is refused before anything
 * exists.
 *
 * The rules: the most specific path wins; at equal paths inaccessible beats
 * read-only beats read-write, and a path option beats what ProtectSystem or
 * ProtectHome implies (ReadWritePaths=/etc with ProtectSystem=full leaves
 * /etc writable, as in systemd). Nothing beneath an inaccessible or tmpfs
 * path can be reached, so another path inside one is refused; nor may a
 * read-write path lie inside /sys or /proc/sys, which every sandbox keeps
 * read-only.
 *
 * Every writable path is a mount of its own, even where its parent is
 * writable already: a Unix socket is reachable only on the job's writable
 * mounts (sandbox-sockets.c tells them by their mount), and a FIFO or a
 * device writable only beneath them (Landlock's rules start there). */

#include <stdbool.h>
#include <stddef.h>

#include "job-record.h"
#include "launch-options.h"

typedef enum SandboxMode {
        SANDBOX_READ_WRITE,   /* as its user has it (below a read-only path: the host's, again) */
        SANDBOX_READ_ONLY,    /* read-only, with everything mounted beneath it */
        SANDBOX_INACCESSIBLE, /* an empty node of mode 000 over it */
        SANDBOX_TMPFS,        /* an empty tmpfs of the job's user over it */
        SANDBOX_DEV,          /* a /dev of the job's own (sandbox-apply.c): a few devices, a new devpts
                               * instance, its own shm; read-write and read-only paths below it are
                               * the host's devices, bound in */
} SandboxMode;

typedef struct SandboxMount {
        char *path;          /* absolute and normalized: no '-', no "//", no trailing '/' */
        SandboxMode mode;
        bool optional;       /* skipped where its user finds nothing ('-', and what ProtectSystem and
                              * ProtectHome imply) */
        bool apply;          /* false: a parent made it so already; it is only looked up */
        bool exit;           /* one of the sandbox's own: a way out closed (sandbox_plan_build()) */
        bool in_dev;         /* a device below the job's own /dev: bound in by the /dev mount itself */
        LaunchOption option; /* the option that asked for it (an exit: the first sandbox option given) */
        unsigned entry;      /* which of that option's paths (0 for ProtectSystem and ProtectHome) */
} SandboxMount;

/* At most: three path options' paths, what ProtectSystem (4) and
 * ProtectHome (3) imply, and the exits (9). */
#define SANDBOX_MOUNTS_MAX (3 * LAUNCH_PATHS_MAX + 16)

typedef struct SandboxPlan {
        SandboxMount *mounts; /* each parent before its children */
        size_t n_mounts;
} SandboxPlan;

/* What enforces what every sandboxed job has, whatever its options (its
 * own /dev and exits closed, IPC, Landlock's scope and its rules for FIFOs
 * and devices, the seccomp filter that hands its socket calls to its
 * supervisor), as the record's sandbox.mechanisms names them after its
 * options' own; NULL-terminated. */
extern const char *const sandbox_common_mechanisms[];

/* Whether s is sandboxed: any LAUNCH_SANDBOX option given (but those that
 * only qualify a sandbox, LAUNCH_SANDBOX_MODIFIER). */
bool sandbox_requested(const JobSpec *s);
/* The first sandbox option s was given (the one a refusal of the sandbox
 * as a whole names); _LAUNCH_OPTION_MAX for none. */
LaunchOption sandbox_first_option(const JobSpec *s);

/* s's plan. A sandboxed job gets the sandbox's own mounts too, its exits
 * closed: the sockets through which work starts outside it (the system
 * bus, systemd's private socket, bgrund --listen's, the job store's under
 * state_dir; NULL: not known, as at Launch) hidden, the user's runtime
 * directory (its session bus, its systemd, its other daemons) an empty
 * tmpfs, /sys (the cgroup tree in it) and the kernel's settings in /proc
 * read-only. -EINVAL with a message for the caller in *ret_error
 * (malloc'd) where its paths cannot be had together; -ENOMEM. */
int sandbox_plan_build(const JobSpec *s, const char *state_dir, SandboxPlan *ret, char **ret_error);
void sandbox_plan_done(SandboxPlan *p);
