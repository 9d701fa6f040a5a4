/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reading pcap/pcapng captures as Ethernet frames with
 * nanosecond timestamps, for rocelat -r, which runs its BPF source,
 * compiled natively, over a capture. Linux cooked (SLL, SLL2) and raw IP
 * captures get a synthetic Ethernet header. A classic pcap file of
 * Ethernet frames is read here, anything else by libpcap. Kept apart from libbpf's
 * headers: <pcap/bpf.h> and <linux/bpf.h> both define struct bpf_insn.
 * Link with -lpcap.
 */
#ifndef AGENTXDP_CAPTURE_H
#define AGENTXDP_CAPTURE_H

#include <stddef.h>

#define CAPTURE_MAX_FRAME 1536	/* frames are cut here: headers end earlier */

struct capture;

/* NULL with a one-line reason in err when the file cannot be used */
struct capture *capture_open(const char *path, char *err, size_t errlen);
/*
 * The next frame: 1 with frame, len and ts_ns set (len may be below 14 for
 * a runt), 0 at the end of the file, -1 on a read error (capture_error()
 * says what; frames before it were good).
 */
int capture_next(struct capture *c, const unsigned char **frame,
		 unsigned int *len, unsigned long long *ts_ns);
/* the captured bytes of the frames read so far (before any cut) */
unsigned long long capture_bytes(const struct capture *c);
/* how far into the file, in bytes; -1 where that is unknown (a pipe) */
long long capture_offset(const struct capture *c);
const char *capture_error(const struct capture *c);
void capture_close(struct capture *c);

#endif
