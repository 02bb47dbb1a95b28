/* SPDX-License-Identifier: MIT */
#include "bus-authority.h"
#include "bgrun/bus-api.h"
#include "bus-client.h"
#include "bus-peer.h"
#include "bus-service.h"
#include "job-id.h"
#include "log.h"
#include "macro.h"
#include "map.h"
#include "name-cache.h"
#include "bus-polkit.h"

/* Who sent a method call, as the bus daemon vouches for it, is asked once
 * per sender (a unique connection name, never reused on a bus, its
 * credentials fixed when it connected), asynchronously, and remembered:
 *  - a filter sees each method call first; one from a sender whose
 *    credentials are not known yet is held while they are asked for (one
 *    query per sender, however many calls it sent meanwhile), and its calls
 *    are dispatched again in their order once the answer is in;
 *  - a sender the daemon no longer knows has gone: its held calls and any
 *    later one are dropped unanswered, with no further query, so a flood of
 *    calls from departed connections costs one query each, not one a call;
 *  - handlers never ask the daemon themselves (that would block the loop on
 *    it): without an answer, the call is refused.
 * What is known of a sender is kept in its connection's record, the
 * registry of callers (bus-client.h), which also bounds how many records
 * hold only that. */
#define GONE_CACHE_SIZE 1024
/* Senders asked about at once: more than dbus-daemon lets one user connect
 * (max_connections_per_user, 256 on the system bus), so that one user's
 * flood of new connections leaves room for everyone else's. */
#define CREDS_QUERIES_MAX 1024
/* Calls one sender may have held before its identity is known: what
 * dbus-daemon lets a connection await (max_replies_per_connection, 128 on
 * the system bus), as many more sent NO_REPLY_EXPECTED (that it does not
 * count), and a margin. */
#define CREDS_HELD_PER_SENDER 320

typedef struct CredsQuery {
        MapNode node;          /* BusAuthority.queries, by sender */
        BusAuthority *authority;
        char *sender;
        sd_bus_slot *slot;     /* GetConnectionCredentials in flight; NULL once answered */
        bool known;            /* answered with an identity */
        uid_t uid;
        pid_t pid;
        sd_bus_message **held; /* CREDS_HELD_PER_SENDER of them */
        unsigned n_held, n_back; /* held, and dispatched again since the answer */
} CredsQuery;

struct BusAuthority {
        BusService *service;   /* its registry of callers holds what is known of each */
        /* Senders known to be gone, found in O(1) on every call (issue #37:
         * they were scanned), the oldest forgotten first. */
        NameCache gone;
        Map queries;           /* CredsQuery by sender */
        /* The call being dispatched and its sender's identity: what the
         * handler asks for, even if the cache has forgotten it meanwhile. */
        sd_bus_message *current;
        uid_t current_uid;
        pid_t current_pid;
        /* bgrund --user: the one uid served, else UID_INVALID. */
        uid_t served_only;
};

static bool creds_cache_get(const BusAuthority *creds, const char *sender, uid_t *ret_uid, pid_t *ret_pid) {
        return bus_client_identity(creds->service, sender, ret_uid, ret_pid);
}

static bool sender_gone(const BusAuthority *creds, const char *sender) {
        return name_cache_find(&creds->gone, sender) >= 0;
}

static void sender_mark_gone(BusAuthority *creds, const char *sender) {
        (void) name_cache_put(&creds->gone, sender);
}

static void query_hash(const void *key, SipHash *state) {
        map_feed_string(state, key);
}

static bool query_is(const MapNode *node, const void *key) {
        return streq(MAP_ITEM(node, CredsQuery, node)->sender, key);
}

static const MapType queries_by_sender = { .hash = query_hash, .has_key = query_is };

static void creds_query_free(CredsQuery *q) {
        (void) map_remove(&q->authority->queries, &q->node);
        sd_bus_slot_unref(q->slot);
        for (unsigned i = q->n_back; i < q->n_held; i++)
                sd_bus_message_unref(q->held[i]);
        free(q->held);
        free(q->sender);
        free(q);
}

static CredsQuery *creds_query_of(const BusAuthority *creds, const char *sender) {
        MapNode *node = map_get(&creds->queries, sender);
        return node ? MAP_ITEM(node, CredsQuery, node) : NULL;
}

/* Every connection on the bus that leaves is told here; only one whose
 * identity bgrund knows or is asking for can have calls still queued to
 * drop, so only such a name takes a place among the departed (the others
 * would push out the names that matter). */
void bus_authority_caller_gone(BusAuthority *a, const char *name) {
        uid_t uid;
        pid_t pid;
        if (creds_cache_get(a, name, &uid, &pid) || creds_query_of(a, name))
                sender_mark_gone(a, name);
}

/* Queue m to be dispatched again (after the ones queued before it). */
static int creds_query_requeue(CredsQuery *q, sd_bus_message *m) {
        int r = sd_bus_enqueue_for_read(sd_bus_message_get_bus(m), m);
        if (r < 0) {
                log_warning_errno(r, "Cannot dispatch a call again after its caller's credentials: %m");
                (void) sd_bus_reply_method_errnof(m, r, "Cannot establish the caller's identity: %m");
        }
        return r;
}

static int on_creds(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        CredsQuery *q = userdata;
        q->slot = sd_bus_slot_unref(q->slot);
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        uint32_t uid = UID_INVALID, pid = 0;
        const char *key;
        int r = e ? -EIO : sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read(reply, "s", &key);
                if (r >= 0 && streq(key, "UnixUserID"))
                        r = sd_bus_message_read(reply, "v", "u", &uid);
                else if (r >= 0 && streq(key, "ProcessID"))
                        r = sd_bus_message_read(reply, "v", "u", &pid);
                else if (r >= 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }

        if (r >= 0 && uid != UID_INVALID) {
                q->known = true;
                q->uid = (uid_t) uid;
                q->pid = (pid_t) pid;
                bus_client_identified(q->authority->service, sd_bus_message_get_bus(reply), q->sender, q->uid,
                                      q->pid);
        } else if (e && sd_bus_error_has_name(e, "org.freedesktop.DBus.Error.NameHasNoOwner")) {
                /* Gone before its calls were read: nobody to answer. */
                sender_mark_gone(q->authority, q->sender);
                creds_query_free(q);
                return 0;
        }
        /* Known or not (its handlers then refuse), its calls go on, in order. */
        for (unsigned i = 0; i < q->n_held; i++)
                if (creds_query_requeue(q, q->held[i]) < 0) {
                        creds_query_free(q);
                        return 0;
                }
        return 0;
}

static int creds_filter(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        BusAuthority *creds = userdata;
        creds->current = NULL;
        if (!sd_bus_message_is_method_call(m, NULL, NULL))
                return 0;
        const char *sender = sd_bus_message_get_sender(m), *iface = sd_bus_message_get_interface(m);
        if (!sender || sender[0] != ':')
                return 0; /* not from a bus client: its handler refuses it */

        CredsQuery *q = creds_query_of(creds, sender);
        if (q && !q->slot) {
                /* Answered: its held calls come back one by one, in order,
                 * and a call read since goes after them. */
                if (q->n_back < q->n_held && q->held[q->n_back] == m) {
                        sd_bus_message_unref(q->held[q->n_back++]);
                        bool known = q->known;
                        uid_t uid = q->uid;
                        pid_t pid = q->pid;
                        if (q->n_back == q->n_held)
                                creds_query_free(q);
                        if (sender_gone(creds, sender))
                                return 1; /* left meanwhile: nobody to answer, nothing to hold */
                        if (known) {
                                creds->current = m;
                                creds->current_uid = uid;
                                creds->current_pid = pid;
                        }
                        return 0;
                }
                if (q->n_held >= CREDS_HELD_PER_SENDER)
                        (void) sd_bus_reply_method_errorf(m, BGRUN_ERROR_LIMIT_EXCEEDED,
                                                          "More than %d calls before the caller's identity was established",
                                                          CREDS_HELD_PER_SENDER);
                else if (creds_query_requeue(q, m) >= 0)
                        q->held[q->n_held++] = sd_bus_message_ref(m);
                return 1;
        }
        uid_t uid;
        pid_t pid;
        if (!q && creds_cache_get(creds, sender, &uid, &pid)) {
                creds->current = m;
                creds->current_uid = uid;
                creds->current_pid = pid;
                return 0;
        }
        /* Answered without an identity (Introspect is not: which job
         * objects exist depends on who asks). */
        if (iface && streq(iface, "org.freedesktop.DBus.Peer"))
                return 0;
        if (sender_gone(creds, sender))
                return 1; /* dropped: nobody to answer */

        if (!q) {
                if (map_size(&creds->queries) >= CREDS_QUERIES_MAX) {
                        (void) sd_bus_reply_method_errorf(m, BGRUN_ERROR_LIMIT_EXCEEDED,
                                                          "bgrund is establishing %d callers' identities; try again",
                                                          CREDS_QUERIES_MAX);
                        return 1;
                }
                q = calloc(1, sizeof(CredsQuery));
                if (q)
                        q->authority = creds;
                if (!q || !(q->sender = strdup(sender)) || !(q->held = calloc(CREDS_HELD_PER_SENDER, sizeof(sd_bus_message *)))) {
                        if (q)
                                free(q->sender);
                        free(q);
                        (void) sd_bus_reply_method_errnof(m, ENOMEM, "Cannot establish the caller's identity: %m");
                        return 1;
                }
                int r = sd_bus_call_method_async(sd_bus_message_get_bus(m), &q->slot, "org.freedesktop.DBus",
                                                 "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                 "GetConnectionCredentials", on_creds, q, "s", sender);
                if (r < 0) {
                        free(q->held);
                        free(q->sender);
                        free(q);
                        (void) sd_bus_reply_method_errnof(m, r, "Cannot establish the caller's identity: %m");
                        return 1;
                }
                r = map_put(&creds->queries, &q->node, q->sender);
                if (r < 0) {
                        sd_bus_slot_unref(q->slot);
                        free(q->held);
                        free(q->sender);
                        free(q);
                        (void) sd_bus_reply_method_errnof(m, r, "Cannot establish the caller's identity: %m");
                        return 1;
                }
        }
        if (q->n_held >= CREDS_HELD_PER_SENDER) {
                (void) sd_bus_reply_method_errorf(m, BGRUN_ERROR_LIMIT_EXCEEDED,
                                                  "More than %d calls before the caller's identity was established",
                                                  CREDS_HELD_PER_SENDER);
                return 1;
        }
        q->held[q->n_held++] = sd_bus_message_ref(m);
        return 1; /* held */
}

int bus_authority_new(BusService *s, BusAuthority **ret) {
        BusAuthority *a = calloc(1, sizeof(BusAuthority));
        if (!a)
                return -ENOMEM;
        a->service = s;
        a->served_only = UID_INVALID;
        a->queries = MAP_INIT(&queries_by_sender);
        if (name_cache_init(&a->gone, GONE_CACHE_SIZE) < 0) {
                bus_authority_free(a);
                return -ENOMEM;
        }
        *ret = a;
        return 0;
}

BusAuthority *bus_authority_free(BusAuthority *a) {
        if (!a)
                return NULL;
        MapIter it;
        for (MapNode *node = map_first(&a->queries, &it); node; node = map_next(&a->queries, &it))
                creds_query_free(MAP_ITEM(node, CredsQuery, node));
        map_done(&a->queries);
        name_cache_done(&a->gone);
        free(a);
        return NULL;
}

int bus_authority_prefetch_creds(BusAuthority *a, sd_bus *bus) {
        return sd_bus_add_filter(bus, NULL, creds_filter, a);
}

static int caller_creds(BusService *s, sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid, sd_bus_error *error) {
        const BusAuthority *creds = s->authority;
        /* A --listen connection: its socket's peer, read at accept, whatever
         * sender its message names. */
        if (bus_peer(s, sd_bus_message_get_bus(m), ret_uid, ret_pid, NULL) >= 0)
                return 0;
        const char *sender = sd_bus_message_get_sender(m);
        if (m == creds->current) {
                *ret_uid = creds->current_uid;
                *ret_pid = creds->current_pid;
                return 0;
        }
        if (sender && sender[0] == ':' && creds_cache_get(creds, sender, ret_uid, ret_pid))
                return 0;
        /* Not asked for by the filter, or the daemon could not say: never
         * asked here, where it would hold up the loop. */
        return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED,
                                 "Request authority denied: the caller's identity cannot be established");
}

void bus_authority_serve_only(BusAuthority *a, uid_t uid) {
        a->served_only = uid;
}

int bus_caller_creds(BusService *s, sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid, sd_bus_error *error) {
        uid_t uid = UID_INVALID, served_only = s->authority->served_only;
        pid_t pid = 0;
        int r = caller_creds(s, m, &uid, &pid, error);
        if (r < 0)
                return r;
        /* A session bus admits only its user's connections (and root's, with
         * some configurations): whoever else comes through is refused. */
        if (served_only != UID_INVALID && uid != served_only)
                return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED,
                                         "Request authority denied: this bgrund --user serves uid %u only",
                                         (unsigned) served_only);
        *ret_uid = uid;
        if (ret_pid)
                *ret_pid = pid;
        return 0;
}

int bus_caller_uid(BusService *s, sd_bus_message *m, uid_t *ret, sd_bus_error *error) {
        return bus_caller_creds(s, m, ret, NULL, error);
}

int caller_is_admin(BusService *s, sd_bus_message *m, uid_t uid) {
        uid_t served_only = s->authority->served_only;
        if (served_only != UID_INVALID) /* bgrund --user: its user, no one else */
                return uid == served_only;
        if (uid == 0)
                return 1;
        int r = bus_polkit_check(s, m, uid, BGRUN_POLKIT_MANAGE_ANY);
        if (r == -EINPROGRESS)
                return r;
        return r > 0; /* a failed query grants nothing */
}

int bus_find_job(BusService *s, sd_bus_message *m, const char *id, Job **ret, sd_bus_error *error) {
        uid_t uid;
        int r = bus_caller_uid(s, m, &uid, error);
        if (r < 0)
                return r;

        /* An invalid id is not echoed: it may be anything the caller sent. */
        if (!job_id_is_valid(id))
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_SUCH_JOB,
                                         "No such job: a job id is %d characters of [a-z0-9]", JOB_ID_LEN);
        /* Asked for whatever id is not the caller's own, there or not: when
         * only another owner's job made bgrund ask, the answer's delay would
         * tell that it exists. */
        Job *j = runtime_find_job(s->runtime, id);
        if (!j || j->owner != uid) {
                r = caller_is_admin(s, m, uid);
                if (r == -EINPROGRESS)
                        return r;
                if (r <= 0)
                        j = NULL;
        }
        if (!j)
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_SUCH_JOB, "No such job: %s", id);
        *ret = j;
        return 0;
}

/* Read a method's leading job id argument and resolve it for the caller. */
int bus_read_job(BusService *s, sd_bus_message *m, Job **ret, sd_bus_error *error) {
        const char *id;
        int r = sd_bus_message_read(m, "s", &id);
        return r < 0 ? r : bus_find_job(s, m, id, ret, error);
}
