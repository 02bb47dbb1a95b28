/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include "job-id.h"
#include "macro.h"

static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
#define ALPHABET_LEN (sizeof(alphabet) - 1)

/* Largest multiple of ALPHABET_LEN that fits a byte: bytes at or above it are
 * thrown away so that every character is equally likely. */
#define ACCEPT_BELOW ((256 / ALPHABET_LEN) * ALPHABET_LEN)

static int random_bytes(uint8_t *buf, size_t n) {
        while (n > 0) {
                ssize_t k = getrandom(buf, n, 0);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                buf += k;
                n -= (size_t) k;
        }
        return 0;
}

int job_id_generate(char ret[static JOB_ID_MAX]) {
        char id[JOB_ID_MAX];
        size_t n = 0;

        while (n < JOB_ID_LEN) {
                uint8_t bytes[32];
                int r;

                r = random_bytes(bytes, sizeof(bytes));
                if (r < 0)
                        return r;

                for (size_t i = 0; i < sizeof(bytes) && n < JOB_ID_LEN; i++)
                        if (bytes[i] < ACCEPT_BELOW)
                                id[n++] = alphabet[bytes[i] % ALPHABET_LEN];
        }
        id[n] = '\0';

        memcpy(ret, id, JOB_ID_MAX);
        return 0;
}

bool job_id_is_valid(const char *id) {
        size_t n;

        if (!id)
                return false;

        /* strnlen so that a long, hostile string is not walked to its end. */
        n = strnlen(id, JOB_ID_LEN + 1);
        if (n != JOB_ID_LEN)
                return false;

        for (size_t i = 0; i < n; i++)
                if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9')))
                        return false;

        return true;
}
