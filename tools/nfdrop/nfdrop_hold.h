/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nfdrop -w without -e (tools/nfdrop/nfdrop_hold.c): the counts settle a drop's
 * rule and verdict only at report time, so each dropped packet is held
 * until the report that counts it, then written with the comment of the
 * row it was counted in. Memory is bounded (NFDROP_HOLD_MAX_PKTS packets,
 * NFDROP_HOLD_MAX_BYTES of their bytes, NFDROP_HOLD_MAX_KEYS packet
 * signatures): a packet beyond that is written at once, unsettled.
 */
#ifndef AGENTXDP_NFDROP_HOLD_H
#define AGENTXDP_NFDROP_HOLD_H

#include <stdbool.h>
#include <linux/types.h>
#include "nfdrop.h"
#include "nfdrop_row.h"
#include "lib/pcapng.h"

#define NFDROP_HOLD_MAX_PKTS	16384
#define NFDROP_HOLD_MAX_BYTES	(16u << 20)
#define NFDROP_HOLD_MAX_KEYS	4096

/* rows a key's packets can go to besides an index into the report's rows */
#define NFDROP_HOLD_FILTERED	(-1)	/* -4, --family, --hook left them out */
#define NFDROP_HOLD_SPLIT	(-2)	/* the trace named more than one rule */

/* a packet written without its report: its names only, and why in words;
 * false when it was not written (the filters leave it out) */
typedef bool (*nfdrop_hold_unsettled_fn)(const struct nfd_event *e, const struct pkt_cap *cap,
					 const char *why);

void nfdrop_hold_init(struct pcapng *p, nfdrop_hold_unsettled_fn unsettled);
/* a packet read from the ring buffer: held, or written unsettled when
 * the caps are reached */
void nfdrop_hold_add(const struct nfd_event *e, const struct pkt_cap *cap);
/* the report's drain counted the packets of key k (those held now) into
 * row (an index into the report's rows, or NFDROP_HOLD_*) */
void nfdrop_hold_settle(const struct nfd_key *k, int row);
/* the report's rows are final: the packets settled are written with their
 * row's comment (nfdrop_row_comment()), in the order they were dropped */
void nfdrop_hold_write(const struct nfdrop_row *rows, int nrows);
/* at exit, after the last report: what no report counted, written */
void nfdrop_hold_flush(void);
/* packets written unsettled so far */
unsigned long long nfdrop_hold_unsettled(void);

#endif
