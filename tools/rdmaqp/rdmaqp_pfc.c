// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rdmaqp's pause counters through SIOCETHTOOL (rdmaqp_pfc.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include "rdmaqp_pfc.h"

/* fmt has one %u: name matches it whole (nothing after) */
static bool match_prio(const char *name, const char *fmt, int *prio)
{
	unsigned int p;
	int end = -1;

	if (sscanf(name, fmt, &p, &end) != 1 || end < 0 || name[end] || p > 7)
		return false;
	*prio = p;
	return true;
}

bool rdmaqp_pause_name(const char *name, int *prio, bool *tx)
{
	static const char *const fmts[][2] = {
		{ "rx_prio%u_pause%n", "tx_prio%u_pause%n" },			/* mlx5 */
		{ "rx_priority_%u_xoff.nic%n", "tx_priority_%u_xoff.nic%n" },	/* ice */
		{ "rx_pfc_ena_frames_pri%u%n", "tx_pfc_ena_frames_pri%u%n" },	/* bnxt */
	};
	static const char *const global[][2] = {
		{ "rx_global_pause", "tx_global_pause" },
		{ "link_xoff_rx.nic", "link_xoff_tx.nic" },
		{ "link_xoff_rx", "link_xoff_tx" },
	};

	for (unsigned int i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		for (int d = 0; d < 2; d++)
			if (match_prio(name, fmts[i][d], prio)) {
				*tx = d;
				return true;
			}
	for (unsigned int i = 0; i < sizeof(global) / sizeof(global[0]); i++)
		for (int d = 0; d < 2; d++)
			if (!strcmp(name, global[i][d])) {
				*prio = RDMAQP_PFC_GLOBAL;
				*tx = d;
				return true;
			}
	if (!strcmp(name, "tx_pause_storm_warning_events") ||
	    !strcmp(name, "tx_pause_storm_error_events")) {
		*prio = RDMAQP_PFC_STORM;
		*tx = true;
		return true;
	}
	return false;
}

static int ethtool(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr = {};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

/* how many stats the driver has (ETH_SS_STATS); 0 or -errno */
static int stats_count(int fd, const char *ifname, __u32 *n)
{
	/* struct ethtool_sset_info ends in data[]: one __u32 follows it */
	__u64 buf[(sizeof(struct ethtool_sset_info) + sizeof(__u32) + 7) / 8] = {};
	struct ethtool_sset_info *s = (struct ethtool_sset_info *)buf;
	int e;

	s->cmd = ETHTOOL_GSSET_INFO;
	s->sset_mask = 1ULL << ETH_SS_STATS;
	e = ethtool(fd, ifname, s);
	if (e)
		return e;
	*n = s->sset_mask ? s->data[0] : 0;
	return 0;
}

/* the pause counters among the driver's stat names */
static int read_names(int fd, struct rdmaqp_pfc *p, __u32 n)
{
	struct ethtool_gstrings *gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
	int e;

	if (!gs)
		return -ENOMEM;
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = n;
	e = ethtool(fd, p->ifname, gs);
	p->n = 0;
	for (__u32 i = 0; !e && i < gs->len && p->n < RDMAQP_PFC_MAX; i++) {
		struct rdmaqp_pause *c = &p->c[p->n];
		char name[ETH_GSTRING_LEN + 1];

		memcpy(name, gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = 0;
		if (!rdmaqp_pause_name(name, &c->prio, &c->tx))
			continue;
		memset(c->name, 0, sizeof(c->name));
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->idx = i;
		c->has_prev = c->ever = false;
		c->value = c->prev = 0;
		p->n++;
	}
	free(gs);
	p->nstats = n;
	return e;
}

static int read_values(int fd, struct rdmaqp_pfc *p)
{
	struct ethtool_stats *st = calloc(1, sizeof(*st) + (size_t)p->nstats * sizeof(__u64));
	int e;

	if (!st)
		return -ENOMEM;
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = p->nstats;
	e = ethtool(fd, p->ifname, st);
	for (int i = 0; !e && i < p->n; i++) {
		struct rdmaqp_pause *c = &p->c[i];

		if (c->idx >= st->n_stats)
			continue;
		c->prev = c->value;
		c->has_prev = c->ever;
		c->ever = true;
		c->value = st->data[c->idx];
	}
	free(st);
	return e;
}

int rdmaqp_pfc_read(struct rdmaqp_pfc *p, const char *ifname)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	__u32 n = 0;
	int e;

	if (fd < 0)
		return -errno;
	if (strcmp(p->ifname, ifname)) {
		memset(p, 0, sizeof(*p));
		snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	}
	e = stats_count(fd, ifname, &n);
	if (!e && n != p->nstats)
		e = read_names(fd, p, n);
	if (!e && p->n)
		e = read_values(fd, p);
	close(fd);
	if (e)
		snprintf(p->why, sizeof(p->why), "%s: no ethtool statistics (%s)", ifname,
			 strerror(-e));
	else if (!n)
		snprintf(p->why, sizeof(p->why), "%s: no ethtool statistics, so no pause counters",
			 ifname);
	else if (!p->n)
		snprintf(p->why, sizeof(p->why), "%s: no pause counters among its %u ethtool "
			 "statistics", ifname, n);
	else
		p->why[0] = 0;
	return e;
}
