/* SPDX-License-Identifier: MIT */
#include "supervisor-spawn.h"

const SupervisorOps supervisor_spawn_ops = {
        .spawn = supervisor_spawn,
        .pool_refill = supervisor_pool_refill,
        .unpin = supervisor_unpin,
        .let_go = supervisor_let_go,
        .abort = supervisor_abort,
        .find = supervisor_find,
        .children_free = supervisor_children_free,
};
