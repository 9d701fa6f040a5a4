/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef AGENTXDP_RXEDROP_H
#define AGENTXDP_RXEDROP_H

#include "lib/pkt_info.h"

#define IFNAMSIZ_AX 16

enum rxedrop_scope {
	SCOPE_ROCE = 0,		/* UDP to the RoCE port only (default) */
	SCOPE_UDP,		/* any UDP */
	SCOPE_ALL,		/* any packet */
};

enum rxedrop_stat {
	STAT_EVENTS_LOST,	/* ring buffer full */
	STAT_NR,
};

struct drop_key {
	__u64 location;
	__u32 reason;
	__u32 pad;
};

struct drop_event {
	__u64 ts_ns;
	__u64 location;
	__u32 reason;
	__u32 ifindex;
	__s32 stack_id;
	__u8 verdict;		/* enum pkt_verdict */
	__u8 pad[3];
	char ifname[IFNAMSIZ_AX];
	struct pkt_info pkt;
};

#endif
