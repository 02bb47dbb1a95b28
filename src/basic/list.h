/* SPDX-License-Identifier: MIT */
#pragma once

/* Doubly linked lists threaded through the items themselves (fields `next`
 * and `prev`), for things that must unlink themselves in O(1) when they end
 * (spawned children, listings in progress). head is the list's first item. */

#define LIST_PREPEND(head, item)                  \
        do {                                      \
                (item)->prev = NULL;              \
                (item)->next = (head);            \
                if ((item)->next)                 \
                        (item)->next->prev = (item); \
                (head) = (item);                  \
        } while (0)

#define LIST_REMOVE(head, item)                        \
        do {                                           \
                if ((item)->prev)                      \
                        (item)->prev->next = (item)->next; \
                else                                   \
                        (head) = (item)->next;         \
                if ((item)->next)                      \
                        (item)->next->prev = (item)->prev; \
                (item)->next = (item)->prev = NULL;    \
        } while (0)

/* The same through fields named NAME_next and NAME_prev. */
#define LIST_PREPEND_F(name, head, item)                           \
        do {                                                       \
                __typeof__(item) _i = (item);                      \
                _i->name##_prev = NULL;                            \
                _i->name##_next = (head);                          \
                if (_i->name##_next)                               \
                        _i->name##_next->name##_prev = _i;         \
                (head) = _i;                                       \
        } while (0)

#define LIST_REMOVE_F(name, head, item)                                    \
        do {                                                               \
                __typeof__(item) _i = (item);                              \
                if (_i->name##_prev)                                       \
                        _i->name##_prev->name##_next = _i->name##_next;    \
                else                                                       \
                        (head) = _i->name##_next;                          \
                if (_i->name##_next)                                       \
                        _i->name##_next->name##_prev = _i->name##_prev;    \
                _i->name##_next = _i->name##_prev = NULL;                  \
        } while (0)

/* Queues: the same, oldest first with a tail to append at, through fields
 * named NAME_next and NAME_prev, so one item can be in several queues
 * (a job is in its owner's and in the runtime's). */
#define QUEUE(type)                \
        struct {                   \
                type *head, *tail; \
        }

#define QUEUE_APPEND(name, q, item)                        \
        do {                                               \
                __typeof__(item) _i = (item);              \
                _i->name##_next = NULL;                    \
                _i->name##_prev = (q).tail;                \
                if ((q).tail)                              \
                        (q).tail->name##_next = _i;        \
                else                                       \
                        (q).head = _i;                     \
                (q).tail = _i;                             \
        } while (0)

/* item is evaluated once, so it may be (q).head itself. */
#define QUEUE_REMOVE(name, q, item)                                        \
        do {                                                               \
                __typeof__(item) _i = (item);                              \
                if (_i->name##_prev)                                       \
                        _i->name##_prev->name##_next = _i->name##_next;    \
                else                                                       \
                        (q).head = _i->name##_next;                        \
                if (_i->name##_next)                                       \
                        _i->name##_next->name##_prev = _i->name##_prev;    \
                else                                                       \
                        (q).tail = _i->name##_prev;                        \
                _i->name##_next = _i->name##_prev = NULL;                  \
        } while (0)
