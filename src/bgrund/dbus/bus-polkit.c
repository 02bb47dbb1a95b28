/* SPDX-License-Identifier: MIT */
#include "bus-service.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"
#include "bus-polkit.h"

struct PolkitQuery {
        PolkitQuery *next;
        BusService *service;
        sd_bus_message *request; /* the caller's message, re-dispatched on answer */
        sd_bus_slot *slot;       /* the CheckAuthorization call in flight */
        char *action;
        const char *action_static; /* the caller's, for the cache */
        uid_t uid;               /* the sender's */
        int result;              /* -EINPROGRESS until polkit answered */
};

static PolkitQuery *query_free(PolkitQuery *q) {
        if (!q)
                return NULL;
        sd_bus_slot_unref(q->slot);
        sd_bus_message_unref(q->request);
        free(q->action);
        free(q);
        return NULL;
}

static void query_unlink(BusService *s, PolkitQuery *q) {
        for (PolkitQuery **p = &s->polkit_queries; *p; p = &(*p)->next)
                if (*p == q) {
                        *p = q->next;
                        return;
                }
}

static const PolkitCached *cache_get(BusService *s, const char *sender, const char *action) {
        uint64_t now = now_monotonic_usec();
        for (size_t i = 0; i < ELEMENTSOF(s->polkit_cache); i++) {
                const PolkitCached *c = &s->polkit_cache[i];
                if (c->action && c->until > now && streq(c->action, action) && streq(c->sender, sender))
                        return c;
        }
        return NULL;
}

static void cache_put(BusService *s, const char *sender, const char *action, int result) {
        if (!sender || strlen(sender) >= sizeof s->polkit_cache[0].sender)
                return;
        PolkitCached *c = &s->polkit_cache[s->polkit_cache_next++ % ELEMENTSOF(s->polkit_cache)];
        strcpy(c->sender, sender);
        c->action = action;
        c->result = result;
        c->until = now_monotonic_usec() + BUS_POLKIT_CACHE_USEC;
}

static int on_check_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        PolkitQuery *q = userdata;
        q->slot = sd_bus_slot_unref(q->slot);

        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int authorized = 0, challenge = 0;
        if (e)
                /* No polkit (or a broken one) makes nobody an admin. */
                log_debug("polkit: %s: %s", e->name, e->message ?: "");
        else if (sd_bus_message_enter_container(reply, 'r', "bba{ss}") < 0 ||
                 sd_bus_message_read(reply, "bb", &authorized, &challenge) < 0)
                authorized = 0;
        q->result = authorized ? 1 : 0;
        if (!e)
                cache_put(q->service, sd_bus_message_get_sender(q->request), q->action_static, q->result);

        /* Dispatch the caller's message again: its handler finds the answer. */
        sd_bus *bus = sd_bus_message_get_bus(q->request);
        int r = sd_bus_enqueue_for_read(bus, q->request);
        if (r < 0) {
                log_warning_errno(r, "polkit: cannot re-dispatch a request: %m");
                (void) sd_bus_reply_method_errnof(q->request, r, "Cannot complete the authorization check: %m");
                query_unlink(q->service, q);
                query_free(q);
        }
        return 0;
}

/* An answered query leaves the list when its message comes back, for that
 * one dispatch: its handler may ask for the answer, or may not any more
 * (what it was about changed meanwhile, as a job forgotten), and either way
 * it is gone with the next message. Kept in the list, one no handler asked
 * for again would hold its message, and a slot of its uid's, for good. */
static int polkit_filter(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        BusService *s = userdata;
        s->polkit_answer = query_free(s->polkit_answer);
        for (PolkitQuery *q = s->polkit_queries; q; q = q->next)
                if (q->request == m && q->result != -EINPROGRESS) {
                        query_unlink(s, q);
                        s->polkit_answer = q;
                        break;
                }
        return 0;
}

int bus_polkit_attach(BusService *s, sd_bus *bus) {
        return sd_bus_add_filter(bus, NULL, polkit_filter, s);
}

int bus_polkit_check(BusService *s, sd_bus_message *m, uid_t uid, const char *action) {
        PolkitQuery *a = s->polkit_answer;
        if (a && a->request == m && streq(a->action, action)) {
                int result = a->result;
                s->polkit_answer = query_free(a);
                return result;
        }
        for (PolkitQuery *q = s->polkit_queries; q; q = q->next)
                if (q->request == m && streq(q->action, action))
                        return -EINPROGRESS;

        /* polkit is asked about bus names only: a direct connection's sender
         * field is its peer's say-so. */
        const char *sender = sd_bus_message_get_sender(m);
        if (!sender || sd_bus_is_bus_client(sd_bus_message_get_bus(m)) <= 0)
                return 0;
        const PolkitCached *c = cache_get(s, sender, action);
        if (c)
                return c->result;

        unsigned all = 0, of_uid = 0;
        for (PolkitQuery *q = s->polkit_queries; q; q = q->next) {
                all++;
                of_uid += q->uid == uid;
        }
        if (of_uid >= BUS_POLKIT_QUERIES_PER_UID_MAX || all >= BUS_POLKIT_QUERIES_MAX) {
                log_debug("polkit: uid %u has %u queries in flight (%u in all): not asking again", (unsigned) uid,
                          of_uid, all);
                return 0;
        }

        PolkitQuery *q = calloc(1, sizeof(PolkitQuery));
        if (!q)
                return -ENOMEM;
        q->service = s;
        q->uid = uid;
        q->request = sd_bus_message_ref(m);
        q->result = -EINPROGRESS;
        q->action = strdup(action);
        q->action_static = action;
        if (!q->action) {
                query_free(q);
                return -ENOMEM;
        }

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        int r = sd_bus_message_new_method_call(s->bus, &call, "org.freedesktop.PolicyKit1",
                                               "/org/freedesktop/PolicyKit1/Authority",
                                               "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(call, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s", sender, action,
                                          0, (uint32_t) sd_bus_message_get_allow_interactive_authorization(m), "");
        if (r >= 0)
                r = sd_bus_call_async(s->bus, &q->slot, call, on_check_reply, q, 0);
        if (r < 0) {
                query_free(q);
                return r;
        }
        q->next = s->polkit_queries;
        s->polkit_queries = q;
        return -EINPROGRESS;
}

void bus_polkit_queries_free(BusService *s) {
        s->polkit_answer = query_free(s->polkit_answer);
        while (s->polkit_queries) {
                PolkitQuery *q = s->polkit_queries;
                s->polkit_queries = q->next;
                query_free(q);
        }
}
