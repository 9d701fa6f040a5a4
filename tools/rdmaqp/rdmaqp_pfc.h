/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A netdev's pause counters from ETHTOOL_GSTATS (what `ethtool -S`
 * prints): per priority (PFC) received and sent, the link's global pause,
 * and mlx5's pause storm events. The names each driver family uses:
 *   mlx5_core  rx_prio3_pause, tx_prio3_pause, rx_global_pause,
 *              tx_pause_storm_warning_events, tx_pause_storm_error_events
 *   ice        rx_priority_3_xoff.nic, tx_priority_3_xoff.nic, link_xoff_rx
 *   bnxt_en    rx_pfc_ena_frames_pri3, tx_pfc_ena_frames_pri3
 * A netdev with none of them (veth, virtio) says so in why.
 */
#ifndef AGENTXDP_RDMAQP_PFC_H
#define AGENTXDP_RDMAQP_PFC_H

#include <stdbool.h>
#include <linux/types.h>

#define RDMAQP_PFC_MAX 24
#define RDMAQP_PFC_GLOBAL -1	/* prio of the link's own pause */
#define RDMAQP_PFC_STORM -2	/* prio of a pause storm counter */

struct rdmaqp_pause {
	char name[33];		/* ETH_GSTRING_LEN + 1: the driver's name */
	int prio;		/* 0..7, or RDMAQP_PFC_GLOBAL/STORM */
	bool tx;		/* sent (tx), else received */
	__u32 idx;		/* in the driver's stats array */
	__u64 value, prev;
	bool has_prev, ever;
};

struct rdmaqp_pfc {
	char ifname[16];
	__u32 nstats;		/* the driver's count when the names were read */
	int n;
	struct rdmaqp_pause c[RDMAQP_PFC_MAX];
	char why[128];		/* n == 0: why there is nothing */
};

/* the name's prio and direction: true when it is a pause counter */
bool rdmaqp_pause_name(const char *name, int *prio, bool *tx);
/* the pause counters of netdev ifname into p (names kept across calls,
 * values shifted into prev); 0, or -errno with p->why said */
int rdmaqp_pfc_read(struct rdmaqp_pfc *p, const char *ifname);

#endif
