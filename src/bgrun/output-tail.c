/* SPDX-License-Identifier: MIT */
/* Where the last N lines of a job's output start, as tail -n finds them:
 * read backwards through the descriptor or ReadOutput. */

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "output.h"
#include "record.h"

/* The offset where the last `lines` lines of the bytes before `end` start,
 * reading backwards through read_at(). */
typedef ssize_t (*ReadAt)(void *userdata, void *buf, size_t n, uint64_t offset);

static int find_tail_start(ReadAt read_at, void *userdata, uint64_t begin, uint64_t end, uint64_t lines,
                           uint64_t *ret) {
        uint8_t buf[16 * 1024];
        uint64_t pos = end, seen = 0;
        bool first = true;

        if (lines == 0) {
                *ret = end;
                return 0;
        }

        while (pos > begin) {
                size_t n = (size_t) MIN((uint64_t) sizeof buf, pos - begin);
                ssize_t k = read_at(userdata, buf, n, pos - n);

                if (k < 0)
                        return (int) k;
                if ((size_t) k < n) /* a shorter read: the middle was dropped; start after it */
                        break;
                for (size_t i = n; i > 0; i--) {
                        if (buf[i - 1] != '\n')
                                continue;
                        /* The newline that ends the last line does not start one. */
                        if (first && pos - n + i == end)
                                continue;
                        if (++seen == lines) {
                                *ret = pos - n + i;
                                return 0;
                        }
                }
                first = false;
                pos -= n;
        }
        *ret = pos;
        return 0;
}

static ssize_t read_at_fd(void *userdata, void *buf, size_t n, uint64_t offset) {
        int fd = *(int *) userdata;
        size_t done = 0;

        while (done < n) {
                ssize_t k = pread(fd, (uint8_t *) buf + done, n - done, (off_t) (offset + done));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                done += (size_t) k;
        }
        return (ssize_t) done;
}

typedef struct ReadOutputAt {
        sd_bus *bus;
        const char *id;
} ReadOutputAt;

static ssize_t read_at_bus(void *userdata, void *buf, size_t n, uint64_t offset) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        ReadOutputAt *a = userdata;
        const void *data;
        size_t size;
        uint64_t next;
        int complete;

        int r = call_read_output(a->bus, a->id, offset, n, &reply, &data, &size, &next, &complete);
        if (r < 0)
                return r;
        /* Bytes from elsewhere than offset (a dropped middle): treat as short. */
        if (next != offset + size)
                return 0;
        if (size == 0)
                return 0; /* data may be NULL */
        memcpy(buf, data, MIN(size, n));
        return (ssize_t) MIN(size, n);
}

int output_seek_tail(sd_bus *bus, OutputSource *src, uint64_t lines) {
        uint64_t start;
        int r;

        if (src->fd >= 0) {
                struct stat st;

                if (!src->regular)
                        return 0; /* a pipe: no going back; all of it */
                if (fstat(src->fd, &st) < 0)
                        return log_error_errno(errno, "Failed to stat output descriptor: %m");
                r = find_tail_start(read_at_fd, &src->fd, 0, (uint64_t) st.st_size, lines, &start);
                if (r < 0)
                        return log_error_errno(r, "Failed to read job output: %m");
                if (lseek(src->fd, (off_t) start, SEEK_SET) < 0)
                        return log_error_errno(errno, "Failed to seek in job output: %m");
                /* A live file is as the job wrote it; a final one (with its marker)
                 * is read to its end either way. */
                src->offset = start;
                return 0;
        } else {
                _cleanup_json_ json_object *rec = NULL;
                ReadOutputAt a = { .bus = bus, .id = src->id };
                uint64_t end;

                r = get_record(bus, src->id, &rec);
                if (r < 0)
                        return r;
                if (!dict_get_uint(rec, &record_keys[RECORD_KEY_OUTPUT_BYTES], &end))
                        return 0;
                r = find_tail_start(read_at_bus, &a, 0, end, lines, &start);
                if (r < 0)
                        return r;
                src->offset = start;
                src->end = end;
                return 0;
        }
}
