/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "job.h"
#include "job-table.h"
#include "macro.h"

typedef struct RequestKey {
        uid_t owner;
        const char *request_id;
} RequestKey;

static void id_hash(const void *key, SipHash *state) {
        map_feed_string(state, key);
}

static bool id_is(const MapNode *node, const void *key) {
        return streq(MAP_ITEM(node, Job, id_node)->id, key);
}

static void request_hash(const void *key, SipHash *state) {
        const RequestKey *k = key;
        map_feed_u64(state, k->owner);
        map_feed_string(state, k->request_id);
}

static bool request_is(const MapNode *node, const void *key) {
        const RequestKey *k = key;
        const Job *j = MAP_ITEM(node, Job, request_node);
        return j->owner == k->owner && streq(j->request_id, k->request_id);
}

static const MapType by_id = { .hash = id_hash, .has_key = id_is };
static const MapType by_request = { .hash = request_hash, .has_key = request_is };

void job_table_init(JobTable *t, JobKey key) {
        *t = (JobTable) { .key = key, .map = MAP_INIT(key == JOB_KEY_ID ? &by_id : &by_request) };
}

static MapNode *node_of(const JobTable *t, Job *j) {
        return t->key == JOB_KEY_ID ? &j->id_node : &j->request_node;
}

static Job *job_of(const JobTable *t, MapNode *node) {
        if (!node)
                return NULL;
        return t->key == JOB_KEY_ID ? MAP_ITEM(node, Job, id_node) : MAP_ITEM(node, Job, request_node);
}

int job_table_put(JobTable *t, Job *j) {
        if (t->key == JOB_KEY_ID)
                return map_put(&t->map, &j->id_node, j->id);
        if (!j->request_id)
                return -EINVAL;
        return map_put(&t->map, &j->request_node, &(RequestKey) { j->owner, j->request_id });
}

Job *job_table_get(const JobTable *t, const char *id) {
        return t->key == JOB_KEY_ID ? job_of(t, map_get(&t->map, id)) : NULL;
}

Job *job_table_get_request(const JobTable *t, uid_t owner, const char *request_id) {
        if (t->key != JOB_KEY_REQUEST)
                return NULL;
        return job_of(t, map_get(&t->map, &(RequestKey) { owner, request_id }));
}

void job_table_remove(JobTable *t, Job *j) {
        if (t->key == JOB_KEY_REQUEST && !j->request_id)
                return;
        (void) map_remove(&t->map, node_of(t, j));
}

size_t job_table_size(const JobTable *t) {
        return map_size(&t->map);
}

void job_table_clear(JobTable *t) {
        map_done(&t->map);
}

Job *job_table_first(const JobTable *t, JobTableIter *i) {
        return job_of(t, map_first(&t->map, i));
}

Job *job_table_next(const JobTable *t, JobTableIter *i) {
        return job_of(t, map_next(&t->map, i));
}
