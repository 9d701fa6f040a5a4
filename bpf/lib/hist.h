/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef AGENTXDP_HIST_H
#define AGENTXDP_HIST_H

#define HIST_SLOTS 32

struct hist {
	__u64 slots[HIST_SLOTS];
};

#endif
