/* SPDX-License-Identifier: MIT */
#include "payload-containment.h"

/* What a mechanism that contains promises (mechanism.h) is exactly a cgroup
 * to kill as a whole and confirm empty, so that promise alone picks the
 * kind: a new cgroup mechanism gets the cgroup code without an entry here. */
static const PayloadContainmentOps *const ops_by_contains[2] = {
        [false] = &payload_process_tree_ops,
        [true] = &payload_cgroup_ops,
};

const PayloadContainmentOps *payload_containment_ops(Mechanism m) {
        if ((unsigned) m >= _MECHANISM_MAX)
                return NULL;
        return ops_by_contains[mechanism_contains(m)];
}

int payload_containment_init(PayloadContainment *c, Mechanism m) {
        const PayloadContainmentOps *ops = payload_containment_ops(m);
        if (!ops)
                return -EINVAL;
        *c = PAYLOAD_CONTAINMENT_NULL;
        c->ops = ops;
        return 0;
}

void payload_containment_done(PayloadContainment *c) {
        safe_close(c->payload_fd);
        free(c->job_cgroup);
        free(c->payload);
        *c = PAYLOAD_CONTAINMENT_NULL;
}
