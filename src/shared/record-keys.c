/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "macro.h"
#include "record-keys.h"

#define KEY_INFO(e, n, s) { n, s },

const KeyInfo record_keys[_RECORD_KEY_MAX] = { BGRUN_RECORD_KEYS(KEY_INFO) };
const KeyInfo containment_keys[_CONTAINMENT_KEY_MAX] = { BGRUN_CONTAINMENT_KEYS(KEY_INFO) };
const KeyInfo teardown_keys[_TEARDOWN_KEY_MAX] = { BGRUN_TEARDOWN_KEYS(KEY_INFO) };
const KeyInfo kill_keys[_KILL_KEY_MAX] = { BGRUN_KILL_KEYS(KEY_INFO) };
const KeyInfo reap_keys[_REAP_KEY_MAX] = { BGRUN_REAP_KEYS(KEY_INFO) };

int key_lookup(const KeyInfo *keys, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(keys[i].name, name))
                        return (int) i;
        return -ENOENT;
}

bool record_key_is_counter(RecordKey k) {
        /* queue_position too: a start moves every place behind it, and
         * announcing each would cost O(queue) a start; network_denied, which
         * the job's supervisor keeps and bgrund reads only when asked. */
        return k == RECORD_KEY_OUTPUT_BYTES || k == RECORD_KEY_CPU_USAGE_USEC || k == RECORD_KEY_MEMORY_PEAK ||
               k == RECORD_KEY_QUEUE_POSITION || k == RECORD_KEY_NETWORK_DENIED;
}

bool record_key_is_optional(RecordKey k) {
        return k == RECORD_KEY_CPU_USAGE_USEC || k == RECORD_KEY_MEMORY_PEAK || k == RECORD_KEY_ARGV;
}
