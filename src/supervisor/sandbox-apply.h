/* SPDX-License-Identifier: MIT */
#pragma once

/* The sandbox, applied by the command's own process between the fork and
 * the exec, while it is still root with bgrund's capabilities: so the
 * command never runs outside it for an instant. Everything here runs in the
 * child that shares the supervisor's memory (exec-child.c's rule): system
 * calls only, on the stack; the plan was made before the fork. */

#include <stddef.h>

#include "job-record.h"
#include "launch-options.h"
#include "sandbox-plan.h"

/* Where the job's user namespace comes from: bgrund --user has no
 * privilege over the host's namespaces, so a sandboxed job of its gets a
 * user namespace of its own first (exec-child.c makes it with the child,
 * or the child makes it itself when it does not share our memory). */
typedef enum SandboxUserNamespace {
        SANDBOX_USERNS_NONE,  /* root: the host's */
        SANDBOX_USERNS_MADE,  /* the child was cloned into a new one: only its maps are to write */
        SANDBOX_USERNS_MAKE,  /* the child makes it (unshare) */
        SANDBOX_USERNS_JOIN,  /* the child enters its session network's (userns_fd), mapped already */
} SandboxUserNamespace;

typedef struct SandboxFailure {
        int error;
        LaunchOption option; /* the option that could not be had */
        int entry;           /* >= 0: that path of option is not there for the job's user (the caller's input) */
        const char *step;
} SandboxFailure;

/* The job's writable mounts, in its view (sandbox_apply() finds them):
 * where its Unix sockets may be reached (socket-broker.h) and its FIFOs and
 * devices written (sandbox-landlock.h). */
#define SANDBOX_WRITABLE_MAX (LAUNCH_PATHS_MAX + 4)
typedef struct SandboxWritable {
        int fds[SANDBOX_WRITABLE_MAX]; /* O_PATH */
        size_t n;
} SandboxWritable;

void sandbox_writable_done(SandboxWritable *w);
/* Their mount ids, comma separated, into buf. */
int sandbox_writable_mount_ids(const SandboxWritable *w, char *buf, size_t size);

typedef struct SandboxSetup {
        const JobSpec *spec;
        const SandboxPlan *plan;     /* its file-system sandbox, planned before the fork; NULL: none */
        SandboxUserNamespace userns;
        int userns_fd;               /* SANDBOX_USERNS_JOIN: the user namespace to enter */
        int netns_fd;                /* PrivateNetwork: a session's network namespace to join; -EBADF: its own */
        int git_record_fd;           /* ProtectGit's placeholder record (git-placeholders.h), for appending */
        char *const *env;            /* the job's environment */
} SandboxSetup;

/* The sandbox, the part made while privileged: PrivateNetwork, then the
 * plan's mounts, ProtectGit's and PrivateTmp, in mount and IPC namespaces
 * of its own whose mounts never reach the host (paths looked up as the
 * job's user); for any sandboxed job its own /dev, its writable mounts
 * found (*writable), and a first Landlock domain, scoped, with no new
 * privileges. 0, or -errno with *ret filled. */
int sandbox_apply(const SandboxSetup *setup, SandboxWritable *writable, SandboxFailure *ret);

/* The rest, once its privileges are dropped and its socket broker forked
 * (exec-child.c): the command's own Landlock domain (sandbox-landlock.h)
 * and its seccomp filter (sandbox-seccomp.h), whose listener the
 * supervisor gets (*ret_listener). */
int sandbox_confine(const JobSpec *spec, const SandboxPlan *plan, const SandboxWritable *writable, int *ret_listener,
                    SandboxFailure *ret);
