/* SPDX-License-Identifier: MIT */
/* The journal side of the log: entries as journald's native protocol reads
 * them, sent to a datagram socket that stands where journald's would. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

static char dir[] = "/tmp/bgrun-test-log.XXXXXX";
static char path[sizeof dir + 16];
static int server = -1;

static void setup(void) {
        cr_assert_not_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/socket", dir);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        strcpy(sa.sun_path, path);
        server = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        cr_assert_geq(server, 0);
        cr_assert_eq(bind(server, (struct sockaddr *) &sa, sizeof sa), 0);
        log_setup("test-log", LOG_TARGET_AUTO);
        cr_assert_eq(log_open_journal(path), 0);
}

static void teardown(void) {
        log_close_journal();
        close(server);
        unlink(path);
        rmdir(dir);
}

TestSuite(log, .init = setup, .fini = teardown);

/* The next entry, NUL-terminated. */
static char *next_entry(void) {
        static char buf[32768];
        ssize_t n = recv(server, buf, sizeof buf - 1, MSG_DONTWAIT);
        cr_assert_gt(n, 0, "no entry reached the socket");
        buf[n] = 0;
        return buf;
}

Test(log, a_structured_entry_carries_its_fields) {
        const LogField fields[] = {
                { "MESSAGE_ID", "0123456789abcdef0123456789abcdef" },
                { "BGRUN_JOB_ID", "abc0123456" },
                { "BGRUN_OWNER_UID", "1001" },
                { "UNUSED", NULL },
        };
        log_struct(LOG_LEVEL_INFO, fields, "Job %s started.", "abc0123456");
        const char *e = next_entry();
        cr_assert_str_eq(e,
                         "PRIORITY=6\nSYSLOG_IDENTIFIER=test-log\nMESSAGE=Job abc0123456 started.\n"
                         "MESSAGE_ID=0123456789abcdef0123456789abcdef\nBGRUN_JOB_ID=abc0123456\n"
                         "BGRUN_OWNER_UID=1001\n");
}

Test(log, plain_messages_and_errno_go_to_the_journal_too) {
        cr_assert_eq(log_error_errno(-ENOENT, "Cannot open %s: %m", "x"), -ENOENT);
        cr_assert_str_eq(next_entry(),
                         "PRIORITY=3\nSYSLOG_IDENTIFIER=test-log\nMESSAGE=Cannot open x: No such file or directory\n"
                         "ERRNO=2\n");
}

Test(log, text_from_elsewhere_cannot_forge_a_field) {
        const LogField fields[] = {
                { "BGRUN_JOB_ID", "abc\nPRIORITY=0" },
                { "_PID", "1" },        /* trusted: journald's own */
                { "lower", "x" },       /* not a field name */
                { "A=B", "x" },
        };
        log_struct(LOG_LEVEL_WARNING, fields, "one\nMESSAGE_ID=forged");
        cr_assert_str_eq(next_entry(),
                         "PRIORITY=4\nSYSLOG_IDENTIFIER=test-log\nMESSAGE=one MESSAGE_ID=forged\n"
                         "BGRUN_JOB_ID=abc PRIORITY=0\n");
}

Test(log, debug_is_not_sent_unless_asked_for) {
        log_debug("quiet");
        char c;
        cr_assert_lt(recv(server, &c, 1, MSG_DONTWAIT), 0);
}
