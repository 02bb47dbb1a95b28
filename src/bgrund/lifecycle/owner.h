/* SPDX-License-Identifier: MIT */
#pragma once

/* What each owner (uid) holds in bgrund, for the per-owner limits of
 * [Limits]: running jobs, records, the output of its ended jobs, and its
 * jobs oldest first, so the oldest ended one is found at once. Owners are
 * few (one per uid that ever launched) and live as long as bgrund. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "list.h"
#include "map.h"

typedef struct Job Job;

typedef struct Owner {
        MapNode node;           /* OwnerTable.owners */
        uid_t uid;
        unsigned running;       /* starting and running jobs */
        unsigned records;       /* jobs in the store */
        uint64_t disk_bytes;    /* output and records on disk of its ended jobs */
        QUEUE(Job) jobs;        /* oldest first (Job.owner_next) */
        /* Its queue (job-queue.c) */
        QUEUE(Job) queued;      /* its queued jobs, in launch order (Job.queued_next) */
        unsigned n_queued;
        Map sessions;           /* SessionGroup by name: its sessions with live jobs */
        struct Owner *ready_next, *ready_prev; /* in Runtime.ready_owners: room may have come for its queue */
        bool ready;
} Owner;

typedef struct OwnerTable {
        Map owners; /* Owner by uid */
} OwnerTable;

Owner *owner_get(OwnerTable *t, uid_t uid);
/* The owner of uid, made when new. */
int owner_get_or_add(OwnerTable *t, uid_t uid, Owner **ret);
/* Free every owner (their session groups are job-queue.c's, gone with their jobs). */
void owner_table_clear(OwnerTable *t);

/* Every owner: for (Owner *o = owner_first(t, &i); o; o = owner_next(t, &i)) */
Owner *owner_first(OwnerTable *t, MapIter *i);
Owner *owner_next(OwnerTable *t, MapIter *i);
