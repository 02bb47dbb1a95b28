/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Write all of data to fd, retrying short writes and EINTR. */
int loop_write(int fd, const void *data, size_t len);

typedef enum WriteFileFlags {
        /* Also on disk when the call returns, through a power loss: one
         * fsync of the file, after its rename. On a journaling file system
         * (ext4, xfs, btrfs) that one commit carries every metadata change
         * made before it: the rename, and the directories it is in. */
        WRITE_FILE_DURABLE = 1 << 0,
} WriteFileFlags;

/* Replace dirfd/name atomically: write a temp file in the same directory and
 * rename it over name. A reader, and anyone after a crash of any process,
 * sees either the old or the new content, never a torn one. Without
 * WRITE_FILE_DURABLE nothing is synced: the page cache survives every crash
 * but a power loss. Returns 0 or -errno. */
int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                         WriteFileFlags flags);

/* fsync dirfd/name (a file written before, e.g. without WRITE_FILE_DURABLE). */
int sync_file_at(int dirfd, const char *name);

/* Read all of dirfd/name (opened O_NOFOLLOW|O_CLOEXEC, regular files only)
 * into a NUL-terminated malloc'd buffer. Fails with -EFBIG past max bytes.
 * ret_len may be NULL. Returns 0 or -errno; outputs written only on success. */
int read_file_at(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len);

/* Like read_file_at() on an fd the caller opened (regular files only; a
 * directory is -EISDIR, anything else -EBADFD). The fd is not closed. */
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len);

/* Remove dirfd/name and everything below it without following symlinks.
 * A missing name is success. Returns 0 or -errno. */
int rm_rf_at(int dirfd, const char *name);
