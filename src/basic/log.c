/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

/* Past this a structured entry goes to stderr as a line: the entries bgrun
 * writes are small, and a datagram this size always fits. */
#define JOURNAL_ENTRY_MAX (16U * 1024U)

static const char *program = "bgrun";
static LogTarget target = LOG_TARGET_AUTO;
static int max_level = LOG_LEVEL_INFO;
static int journal_fd = -EBADF;

/* systemd sets JOURNAL_STREAM=DEV:INO for a service whose stderr is a
 * journal stream; a process that inherited the variable but whose stderr
 * went elsewhere (a redirect, a child) must not take it for its own. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        if (!e)
                return false;
        uint64_t dev, ino;
        if (sscanf(e, "%" SCNu64 ":%" SCNu64, &dev, &ino) != 2)
                return false;
        struct stat st;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (uint64_t) st.st_dev == dev && (uint64_t) st.st_ino == ino;
}

int log_open_journal(const char *socket_path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(socket_path) >= sizeof sa.sun_path)
                return -EINVAL;
        strcpy(sa.sun_path, socket_path);

        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        log_close_journal();
        journal_fd = fd;
        return 0;
}

void log_close_journal(void) {
        if (journal_fd >= 0)
                close(journal_fd);
        journal_fd = -EBADF;
}

void log_setup(const char *name, LogTarget t) {
        program = name;
        target = t;
        const char *e = getenv("SYSTEMD_LOG_LEVEL");
        if (e && (streq(e, "debug") || streq(e, "7")))
                max_level = LOG_LEVEL_DEBUG;
        if (t == LOG_TARGET_AUTO && stderr_is_journal())
                (void) log_open_journal(JOURNAL_SOCKET); /* else lines on stderr, which journald reads too */
}

/* Control characters become spaces: text that came from elsewhere cannot
 * forge a second line or a second field. */
static void flatten(char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < ' ' || *s == 0x7f)
                        *s = ' ';
}

static bool field_name_ok(const char *name) {
        /* journald's rule: A-Z, 0-9 and '_', not starting with '_' (those
         * are the trusted fields journald adds itself) nor a digit. */
        if (!name[0] || name[0] == '_' || (name[0] >= '0' && name[0] <= '9') || strlen(name) > 64)
                return false;
        for (const char *p = name; *p; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
                        return false;
        return true;
}

/* journald's native protocol: one datagram of NAME=value lines. */
static int journal_send(int level, int error, const char *message, const LogField *fields, size_t n_fields) {
        char head[128];
        int n = snprintf(head, sizeof head, "PRIORITY=%d\nSYSLOG_IDENTIFIER=%s\n", level, program);
        if (n < 0 || (size_t) n >= sizeof head)
                return -EINVAL;

        _cleanup_free_ char *entry = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&entry, &size);
        if (!f)
                return -ENOMEM;
        fputs(head, f);
        fprintf(f, "MESSAGE=%s\n", message);
        if (error < 0)
                fprintf(f, "ERRNO=%d\n", -error);
        for (size_t i = 0; i < n_fields; i++) {
                if (!fields[i].value || !field_name_ok(fields[i].name))
                        continue;
                _cleanup_free_ char *v = strdup(fields[i].value);
                if (!v) {
                        fclose(f);
                        return -ENOMEM;
                }
                flatten(v);
                fprintf(f, "%s=%s\n", fields[i].name, v);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        if (size > JOURNAL_ENTRY_MAX)
                return -E2BIG;

        if (send(journal_fd, entry, size, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
                return -errno;
        return 0;
}

int log_struct_internal(int level, int error, const LogField *fields, size_t n_fields, const char *fmt, ...) {
        if (error > 0)
                error = -error;
        if (level > max_level)
                return error;

        int saved = errno;
        if (error < 0)
                errno = -error; /* so that %m names the error we were given */

        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *line = NULL;
        int n = vasprintf(&line, fmt, ap);
        va_end(ap);
        if (n < 0) {
                errno = saved;
                return error;
        }
        flatten(line);

        if (journal_fd >= 0 && journal_send(level, error, line, fields, n_fields) >= 0) {
                errno = saved;
                return error;
        }

        /* "<N>" prefixes are understood by journald for stderr streams. */
        if (target == LOG_TARGET_AUTO && getenv("JOURNAL_STREAM"))
                fprintf(stderr, "<%d>%s\n", level, line);
        else
                fprintf(stderr, "%s: %s\n", program, line);

        errno = saved;
        return error;
}
