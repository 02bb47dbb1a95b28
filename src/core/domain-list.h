/* SPDX-License-Identifier: MIT */
#pragma once

/* AllowedDomains' names (contract: "Network: shared within a session, and
 * by name"): an entry is host (itself) or *.host (its subdomains, at least
 * two labels after "*."), of lower-case ASCII letters, digits and '-' in
 * dot-separated labels of 1 to 63 bytes (IDNs in punycode), at most 253
 * bytes, never an IP literal, with an optional :port (1-65535; without one,
 * 80 and 443). The same rules check a Launch (launch-types.c) and decide
 * each request of a job's proxy, before any name is resolved. Pure. */

#include <stdbool.h>
#include <stdint.h>

#define DOMAIN_LIST_MAX 64          /* entries */
#define DOMAIN_NAME_MAX 253         /* bytes of a host name */
#define DOMAIN_ENTRY_MAX (2 + DOMAIN_NAME_MAX + 6) /* "*." name ":65535" */

/* Whether s is a host name the list can name: its labels as above, the last
 * not all digits (which an IPv4 literal's is). */
bool domain_name_valid(const char *s);
/* Whether e is an entry. */
bool domain_entry_valid(const char *e);

/* Whether list (NULL-terminated entries, valid ones) allows host (a valid
 * name, lower-case) on port; *ret_exact (may be NULL): an entry names the
 * host itself, not by a wildcard, which lets it reach a loopback, link-local
 * or private address. */
bool domain_list_allows(char *const *list, const char *host, uint16_t port, bool *ret_exact);
