/* SPDX-License-Identifier: MIT */
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "address-filter.h"

static bool ipv4_is_private(uint32_t a) { /* host order */
        return (a >> 24) == 0 || (a >> 24) == 10 || (a >> 22) == ((100u << 2) | 1) || (a >> 24) == 127 ||
               (a >> 16) == ((169u << 8) | 254) || (a >> 20) == ((172u << 4) | 1) || (a >> 16) == ((192u << 8) | 168);
}

bool address_is_private(const struct sockaddr *sa) {
        if (sa->sa_family == AF_INET)
                return ipv4_is_private(ntohl(((const struct sockaddr_in *) sa)->sin_addr.s_addr));
        if (sa->sa_family != AF_INET6)
                return true; /* nothing else is connected to */
        const uint8_t *b = ((const struct sockaddr_in6 *) sa)->sin6_addr.s6_addr;
        static const uint8_t zero[16], mapped[12] = { [10] = 0xff, [11] = 0xff }, nat64[12] = { 0, 0x64, 0xff, 0x9b };
        if (memcmp(b, zero, 15) == 0 && (b[15] == 0 || b[15] == 1)) /* :: and ::1 */
                return true;
        if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)) /* fc00::/7, fe80::/10 */
                return true;
        if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0)
                return ipv4_is_private((uint32_t) b[12] << 24 | (uint32_t) b[13] << 16 | (uint32_t) b[14] << 8 | b[15]);
        return false;
}
