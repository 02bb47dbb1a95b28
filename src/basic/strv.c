/* SPDX-License-Identifier: MIT */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "strv.h"

size_t strv_length(char *const *l) {
        size_t n = 0;
        for (; l && l[n]; n++)
                ;
        return n;
}

char **strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **i = l; *i; i++)
                free(*i);
        free(l);
        return NULL;
}

/* The slots a list of n entries has: its entries and the NULL, rounded up to
 * a power of two. Derived from n, so the list needs no header of its own. */
static size_t strv_slots(size_t n) {
        size_t s = 1;
        while (s < n + 1)
                s <<= 1;
        return s;
}

int strv_push(char ***l, size_t *n, char *value) {
        assert(l && n && value);
        size_t k = *n;
        if (k >= SIZE_MAX / sizeof(char *) / 2)
                return -ENOMEM;
        if (k + 2 > strv_slots(k)) {
                char **p = reallocarray(*l, strv_slots(k + 1), sizeof(char *));
                if (!p)
                        return -ENOMEM;
                *l = p;
        }
        (*l)[k] = value;
        (*l)[k + 1] = NULL;
        *n = k + 1;
        return 0;
}

int strv_consume(char ***l, size_t *n, char *value) {
        if (!value)
                return -ENOMEM;
        int r = strv_push(l, n, value);
        if (r < 0)
                free(value);
        return r;
}

char **strv_copy(char *const *l) {
        if (!l)
                return NULL;
        size_t n = strv_length(l);
        char **c = calloc(n + 1, sizeof(char *));
        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(l[i])))
                        return strv_free(c);
        return c;
}

bool strv_equal(char *const *a, char *const *b) {
        for (; a && b && *a && *b; a++, b++)
                if (strcmp(*a, *b) != 0)
                        return false;
        return (!a || !*a) && (!b || !*b);
}
