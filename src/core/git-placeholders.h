/* SPDX-License-Identifier: MIT */
#pragma once

/* A sandboxed job's placeholders (supervisor/sandbox-git.h): what
 * ProtectGit made in the user's tree so that the job could not make it
 * (an empty .git, hooks/, config), and must be gone once the job is. The
 * record, <job>/git-placeholders, is made empty with the spec (and as
 * durable); each placeholder's line is written, and synced, before it is
 * made, its inode's after:
 *   P <TAB> directory <TAB> name <TAB> d|f <LF>     about to be made there
 *   I <TAB> major:minor <TAB> inode <LF>            the last P's, as made
 * A P without its I was not made (or made as a crash cut the job short:
 * then it is left, never removed by a path alone). Removal is by inode,
 * as the job's user, through openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)
 * from the directory: a directory only while empty, a file only while
 * empty, so nothing the user put there since goes. The writers here
 * format into the caller's buffer, with no allocation: the command's child
 * calls them. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GIT_PLACEHOLDERS_FILE "git-placeholders"

typedef struct GitPlaceholder {
        char *dir;
        char *name;
        bool is_dir;
        bool made; /* its inode was recorded */
        unsigned major, minor;
        uint64_t ino;
} GitPlaceholder;

/* The lines, into buf (size bytes): their length, or 0 where they do not fit. */
size_t git_placeholder_format_intent(char *buf, size_t size, const char *dir, const char *name, bool is_dir);
size_t git_placeholder_format_made(char *buf, size_t size, unsigned major, unsigned minor, uint64_t ino);

/* The record's placeholders that were made (*ret, n of them), or none
 * where there is no record. */
int git_placeholders_read(int dir_fd, GitPlaceholder **ret, size_t *ret_n);
void git_placeholders_free(GitPlaceholder *p, size_t n);

/* Remove what p says, as the calling process's user: 0, or the first
 * -errno (each is tried). One that is not there, or not what was made,
 * is left: nothing to remove. */
int git_placeholders_remove(const GitPlaceholder *p, size_t n);

/* Whether job dir_fd has placeholders left to remove. */
bool git_placeholders_pending(int dir_fd);
/* The record emptied, once they are gone. */
int git_placeholders_forget(int dir_fd);
/* The record, empty, made with the spec (job-store.h's crash model: its
 * entry is as durable as the spec's, whose sync follows). */
int git_placeholders_create(int dir_fd);
