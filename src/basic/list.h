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
