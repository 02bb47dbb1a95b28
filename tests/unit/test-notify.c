/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

Test(notify, without_socket_does_nothing) {
        unsetenv("NOTIFY_SOCKET");
        cr_assert_eq(notify_send("READY=1"), 0);
}

Test(notify, relative_socket_is_refused) {
        setenv("NOTIFY_SOCKET", "relative/path", 1);
        cr_assert_eq(notify_send("READY=1"), -EINVAL);
}

static void roundtrip(const char *address, const struct sockaddr_un *sa, socklen_t len) {
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        cr_assert_geq(fd, 0);
        cr_assert_eq(bind(fd, (const struct sockaddr *) sa, len), 0);
        setenv("NOTIFY_SOCKET", address, 1);
        cr_assert_eq(notify_send("READY=1\nSTATUS=x"), 1);
        char buf[64] = {};
        ssize_t n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
        cr_assert_eq(n, (ssize_t) strlen("READY=1\nSTATUS=x"));
        cr_assert_str_eq(buf, "READY=1\nSTATUS=x");
        close(fd);
}

Test(notify, path_socket) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/bgrun-test-notify.%d", (int) getpid());
        unlink(path);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        strcpy(sa.sun_path, path);
        roundtrip(path, &sa, sizeof sa);
        unlink(path);
}

Test(notify, abstract_socket) {
        char name[64];
        snprintf(name, sizeof name, "@bgrun-test-notify-%d", (int) getpid());
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
        roundtrip(name, &sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(name)));
}
