/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "macro.h"
#include "notify.h"

int notify_send(const char *state) {
        const char *path = getenv("NOTIFY_SOCKET");
        if (!path || !*path)
                return 0;

        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(path);
        if (len >= sizeof sa.sun_path || (path[0] != '/' && path[0] != '@'))
                return -EINVAL;
        memcpy(sa.sun_path, path, len);
        if (path[0] == '@')
                sa.sun_path[0] = '\0'; /* abstract namespace */
        socklen_t salen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));

        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *) &sa, salen) < 0)
                return negative_errno();
        return 1;
}
