/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The histogram layout both sides read: a log2 histogram of HIST_SLOTS
 * slots; bpf/lib/hist.bpf.h fills it in BPF, tools/lib/hist.c prints it.
 */
#ifndef AGENTXDP_HIST_H
#define AGENTXDP_HIST_H

#define HIST_SLOTS 32

struct hist {
	__u64 slots[HIST_SLOTS];
};

#endif
