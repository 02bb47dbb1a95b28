/* SPDX-License-Identifier: MIT */
#pragma once

/* The record's keys (include/bgrun/record-keys.h) as tables: an enum per
 * dictionary (RECORD_KEY_ID, TEARDOWN_KEY_DEAD, …), and each key's name and
 * D-Bus signature by that enum. */

#include <stdbool.h>
#include <stddef.h>

#include "bgrun/record-keys.h"

typedef struct KeyInfo {
        const char *name;
        const char *signature;
} KeyInfo;

#define KEY_ENUM(prefix, e, name, sig) prefix##e,
#define RECORD_ENUM(e, n, s) KEY_ENUM(RECORD_KEY_, e, n, s)
#define CONTAINMENT_ENUM(e, n, s) KEY_ENUM(CONTAINMENT_KEY_, e, n, s)
#define TEARDOWN_ENUM(e, n, s) KEY_ENUM(TEARDOWN_KEY_, e, n, s)
#define KILL_ENUM(e, n, s) KEY_ENUM(KILL_KEY_, e, n, s)
#define REAP_ENUM(e, n, s) KEY_ENUM(REAP_KEY_, e, n, s)

typedef enum RecordKey { BGRUN_RECORD_KEYS(RECORD_ENUM) _RECORD_KEY_MAX } RecordKey;
typedef enum ContainmentKey { BGRUN_CONTAINMENT_KEYS(CONTAINMENT_ENUM) _CONTAINMENT_KEY_MAX } ContainmentKey;
typedef enum TeardownKey { BGRUN_TEARDOWN_KEYS(TEARDOWN_ENUM) _TEARDOWN_KEY_MAX } TeardownKey;
typedef enum KillKey { BGRUN_KILL_KEYS(KILL_ENUM) _KILL_KEY_MAX } KillKey;
typedef enum ReapKey { BGRUN_REAP_KEYS(REAP_ENUM) _REAP_KEY_MAX } ReapKey;

extern const KeyInfo record_keys[_RECORD_KEY_MAX];
extern const KeyInfo containment_keys[_CONTAINMENT_KEY_MAX];
extern const KeyInfo teardown_keys[_TEARDOWN_KEY_MAX];
extern const KeyInfo kill_keys[_KILL_KEY_MAX];
extern const KeyInfo reap_keys[_REAP_KEY_MAX];

/* Whether a record key may be absent from a record (a figure the kernel
 * does not keep for the job: memory_peak, cpu_usage_usec, which as
 * properties then read UINT64_MAX, as systemd's counters do; argv of a job
 * launched without Argv, as a property an empty list). */
bool record_key_is_optional(RecordKey k);

/* Whether a record key is a counter that changes all the time (output_bytes,
 * queue_position): like systemd's counters, its changes are not announced. */
bool record_key_is_counter(RecordKey k);

/* The index of name in keys[0..n), or -ENOENT. */
int key_lookup(const KeyInfo *keys, size_t n, const char *name);
