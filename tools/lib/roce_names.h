/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Printing the correlation key: addresses, RoCE opcodes, AETH syndromes. */
#ifndef AGENTXDP_ROCE_NAMES_H
#define AGENTXDP_ROCE_NAMES_H

#include <stdbool.h>
#include <linux/types.h>
#include "json.h"
#include "../../bpf/lib/pkt_info.h"

#define ADDR_STRLEN 46

/* "RC_SEND_ONLY", "UD_SEND_ONLY", "CNP", "RC_0x1f" */
const char *roce_opcode_name(__u8 opcode, char *buf, int len);
/* "ACK", "RNR_NAK(timer=N)", "NAK_PSN_SEQ_ERR", ... */
const char *roce_syndrome_name(__u8 syndrome, char *buf, int len);
/* address of family 4 or 6 from a 16-byte field; "-" for family 0 */
const char *pkt_addr_str(__u8 family, const __u8 *addr, char *buf, int len);
/* an address and, for a packet with ports, ":port": the longest */
#define PKT_END_STRLEN (ADDR_STRLEN + 6)
/* one end of pi as text, the source (src) or the destination:
 * "10.0.0.1:4791"; the address alone when the packet has no ports (both
 * zero: not UDP or TCP), "-" for family 0 */
const char *pkt_end_str(const struct pkt_info *pi, bool src, char *buf, int len);
/* writes the shared correlation key fields of a packet: family, saddr,
 * daddr, sport, dport and, for RoCE, opcode, dqpn, psn (and AETH/RETH) */
void pkt_json_fields(struct json_w *w, const struct pkt_info *pi, bool roce);

#endif
