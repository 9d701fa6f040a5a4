// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Names for the correlation key (roce_names.h): addresses, RoCE opcodes,
 * AETH syndromes, as text and as JSON fields every tool prints alike.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "roce_names.h"
#include "../../bpf/lib/roce_proto.h"

static const char *const op_names[32] = {
	[ROCE_SEND_FIRST] = "SEND_FIRST",
	[ROCE_SEND_MIDDLE] = "SEND_MIDDLE",
	[ROCE_SEND_LAST] = "SEND_LAST",
	[ROCE_SEND_LAST_IMM] = "SEND_LAST_IMM",
	[ROCE_SEND_ONLY] = "SEND_ONLY",
	[ROCE_SEND_ONLY_IMM] = "SEND_ONLY_IMM",
	[ROCE_WRITE_FIRST] = "WRITE_FIRST",
	[ROCE_WRITE_MIDDLE] = "WRITE_MIDDLE",
	[ROCE_WRITE_LAST] = "WRITE_LAST",
	[ROCE_WRITE_LAST_IMM] = "WRITE_LAST_IMM",
	[ROCE_WRITE_ONLY] = "WRITE_ONLY",
	[ROCE_WRITE_ONLY_IMM] = "WRITE_ONLY_IMM",
	[ROCE_READ_REQUEST] = "READ_REQUEST",
	[ROCE_READ_RESP_FIRST] = "READ_RESP_FIRST",
	[ROCE_READ_RESP_MIDDLE] = "READ_RESP_MIDDLE",
	[ROCE_READ_RESP_LAST] = "READ_RESP_LAST",
	[ROCE_READ_RESP_ONLY] = "READ_RESP_ONLY",
	[ROCE_ACKNOWLEDGE] = "ACK",
	[ROCE_ATOMIC_ACK] = "ATOMIC_ACK",
	[ROCE_COMPARE_SWAP] = "CMP_SWAP",
	[ROCE_FETCH_ADD] = "FETCH_ADD",
	[ROCE_SEND_LAST_INV] = "SEND_LAST_INV",
	[ROCE_SEND_ONLY_INV] = "SEND_ONLY_INV",
};

static const char *const transport_names[8] = {
	"RC", "UC", "RD", "UD", "CNP", "XRC", "T6", "T7",
};

const char *roce_opcode_name(__u8 opcode, char *buf, int len)
{
	const char *op = op_names[ROCE_OP(opcode)];

	if (opcode == ROCE_OPCODE_CNP)
		snprintf(buf, len, "CNP");
	else if (op)
		snprintf(buf, len, "%s_%s", transport_names[opcode >> 5], op);
	else
		snprintf(buf, len, "%s_0x%02x", transport_names[opcode >> 5],
			 ROCE_OP(opcode));
	return buf;
}

static const char *const nak_names[ROCE_NAK_CODES] = {
	"NAK_PSN_SEQ_ERR", "NAK_INVALID_REQ", "NAK_REMOTE_ACCESS",
	"NAK_REMOTE_OP", "NAK_INVALID_RD",
};

const char *roce_syndrome_name(__u8 syndrome, char *buf, int len)
{
	unsigned int code = ROCE_AETH_CODE(syndrome);

	switch (ROCE_AETH_KIND(syndrome)) {
	case ROCE_AETH_ACK:
		snprintf(buf, len, "ACK");
		break;
	case ROCE_AETH_RNR_NAK:
		snprintf(buf, len, "RNR_NAK(timer=%u)", code);
		break;
	case ROCE_AETH_NAK:
		if (code < ROCE_NAK_CODES)
			snprintf(buf, len, "%s", nak_names[code]);
		else
			snprintf(buf, len, "NAK_%u", code);
		break;
	default:
		snprintf(buf, len, "RESERVED_0x%02x", syndrome);
	}
	return buf;
}

const char *pkt_addr_str(__u8 family, const __u8 *addr, char *buf, int len)
{
	if (family == 4)
		inet_ntop(AF_INET, addr, buf, len);
	else if (family == 6)
		inet_ntop(AF_INET6, addr, buf, len);
	else
		snprintf(buf, len, "-");
	return buf;
}

const char *pkt_end_str(const struct pkt_info *pi, bool src, char *buf, int len)
{
	size_t n;

	pkt_addr_str(pi->family, src ? pi->saddr : pi->daddr, buf, len);
	n = strlen(buf);
	if (pi->family && (pi->sport || pi->dport))
		snprintf(buf + n, len - n, ":%u", src ? pi->sport : pi->dport);
	return buf;
}

void pkt_json_fields(struct json_w *w, const struct pkt_info *pi, bool roce)
{
	char a[ADDR_STRLEN], b[32];

	if (!pi->family)
		return;
	json_u64(w, "family", pi->family);
	json_str(w, "saddr", pkt_addr_str(pi->family, pi->saddr, a, sizeof(a)));
	json_str(w, "daddr", pkt_addr_str(pi->family, pi->daddr, a, sizeof(a)));
	json_u64(w, "ip_proto", pi->ip_proto);
	if (pi->sport || pi->dport) {
		json_u64(w, "sport", pi->sport);
		json_u64(w, "dport", pi->dport);
	}
	if (!roce)
		return;
	json_str(w, "opcode", roce_opcode_name(pi->opcode, b, sizeof(b)));
	json_u64(w, "dqpn", pi->dqpn);
	json_u64(w, "psn", pi->psn);
	json_bool(w, "ackreq", pi->flags & PKT_F_ACKREQ);
	if (pi->flags & PKT_F_AETH)
		json_str(w, "aeth", roce_syndrome_name(pi->syndrome, b, sizeof(b)));
	if (pi->flags & PKT_F_DETH)
		json_u64(w, "src_qp", pi->src_qp);
}
