/*
 * channels.h - the run's channel (channels.c): a file of its own that holds
 * the prelude the shell reads and, after it, the report the shell writes.
 */
#ifndef SHX_CHANNELS_H
#define SHX_CHANNELS_H

#include <stddef.h>

#include "buf.h"
#include "record.h"
#include "shexec.h"

/*
 * A new anonymous file (a memfd, else an unlinked temporary file) holding
 * prelude, its offset back at 0 and opened for appending, close-on-exec, at
 * 10 or above, in *out. SHEXEC_OK, or SHEXEC_ENOMEM / SHEXEC_ESYS with the
 * session's message set (nothing left open).
 */
int shx_channel_open(shexec_session *s, const shx_buf *prelude, int *out);

/* The channel's number in the shell: SHX_CHANNEL_FD (script.h), or lower
 * where the limit on open descriptors is lower (a dup2 above it fails);
 * -1 when that limit is below 12. */
int shx_channel_number(void);

/* Feed rec what the file holds from offset `from` to its end (the record
 * bounds how much is taken). 0, or -1 when the file cannot be read. */
int shx_channel_read(int fd, size_t from, shx_record *rec);

/* 1 when /dev/fd/FD opens the file open at descriptor fd in this process
 * (Linux: /proc is mounted; elsewhere fdescfs or its like), else 0. */
int shx_devfd_works(int fd);

#endif
