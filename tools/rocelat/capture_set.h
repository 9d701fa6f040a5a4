/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Several capture files read as one recording (a mirror session rotated by
 * tcpdump -C or -G): frames of all files in timestamp order, by a k-way
 * merge over the files' next frames, each file through capture.h. Every
 * file is checked when the set is opened (readable, a pcap or pcapng
 * magic, a link type capture.h reads, the time of its first frame) and
 * closed again, but for the earliest; the merge reopens a file when it
 * reaches that first frame and closes it at its end, so a rotation of any
 * length needs only as many descriptors as files overlap in time. A pipe
 * or stdin ("-") cannot be reopened: it stays open from the check on.
 * Memory: a few dozen bytes per file, and one capture.h reader per open
 * file.
 */
#ifndef AGENTXDP_CAPTURE_SET_H
#define AGENTXDP_CAPTURE_SET_H

#include <stddef.h>

struct capture_set;

/* NULL with "FILE: reason" in err when one of the n files cannot be used */
struct capture_set *capture_set_open(const char *const *paths, int n,
				     char *err, size_t errlen);
/*
 * The next frame of the recording, as capture_next(): 1 with frame, len
 * and ts_ns set (valid until the next call), 0 after the last frame of the
 * last file, -1 on a read error (capture_set_error() names the file;
 * frames before it were good, and every later call is -1 too). Frames of
 * the same time keep their file's order: the file whose first frame is
 * earlier (for equal first frames, given earlier) comes first.
 */
int capture_set_next(struct capture_set *s, const unsigned char **frame,
		     unsigned int *len, unsigned long long *ts_ns);
const char *capture_set_error(const struct capture_set *s);
/* the file of the frame capture_set_next() gave last */
const char *capture_set_path(const struct capture_set *s);
int capture_set_files(const struct capture_set *s);
/* the captured bytes of the frames read so far (capinfos' data size) */
unsigned long long capture_set_bytes(const struct capture_set *s);
/* how much of the files' bytes on disk is read, 0 to 1; -1 when no file
 * has a size (pipes only) */
double capture_set_fraction(const struct capture_set *s);
void capture_set_close(struct capture_set *s);

#endif
