// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools/lib/roce_pkt.c, the one user-space RoCE builder, byte by byte
 * against the wire layout (docs/DESIGN.md), and cli_parse_u64. */
#include <errno.h>
#include <string.h>
#include "../../bpf/lib/roce_proto.h"
#include "../../tools/lib/roce_pkt.h"
#include "../../tools/lib/cli.h"
#include "tap.h"

static void test_ack(void)
{
	const struct roce_pkt a = {
		.opcode = ROCE_ACKNOWLEDGE, .migreq = true, .dqpn = 0x123456,
		.psn = 0x1000001, .syndrome = ROCE_AETH_SYNDROME(ROCE_AETH_NAK,
								 ROCE_NAK_PSN_SEQ_ERR),
		.msn = 0xabcdef,
	};
	static const uint8_t want[] = {
		0x11, 0x40, 0xff, 0xff, 0, 0x12, 0x34, 0x56, 0, 0, 0, 1,
		0x60, 0xab, 0xcd, 0xef, 0, 0, 0, 0,
	};
	uint8_t p[64];

	tap_eq(roce_pkt_len(&a), sizeof(want), "ACK: BTH + AETH + ICRC");
	tap_eq(roce_pkt_build(&a, p, sizeof(p)), sizeof(want), "ACK built");
	tap_ok(!memcmp(p, want, sizeof(want)), "ACK bytes: PSN modulo 2^24, NAK syndrome 0x60");
	tap_eq(roce_pkt_build(&a, p, sizeof(want) - 1), 0, "too small a buffer: 0");
}

static void test_requests(void)
{
	const uint8_t payload[5] = { 1, 2, 3, 4, 5 };
	struct roce_pkt w = {
		.opcode = ROCE_WRITE_FIRST, .migreq = true, .ackreq = false,
		.pad = 3, .dqpn = 0x11, .psn = 7, .va = 0x7f0000000001ull,
		.rkey = 0x1000, .dma_len = 2500, .payload = payload,
		.payload_len = sizeof(payload),
	};
	uint8_t p[128];
	size_t n;

	n = roce_pkt_build(&w, p, sizeof(p));
	tap_eq(n, ROCE_BTH_LEN + ROCE_RETH_LEN + 5 + 3 + ROCE_ICRC_LEN,
	       "WRITE FIRST: BTH + RETH + payload + pad + ICRC");
	tap_eq(p[1], 0x40 | 0x30, "MigReq and PadCnt 3");
	tap_eq(roce_get32(p + 12), 0x7f00, "RETH VA high");
	tap_eq(roce_get32(p + 16), 1, "RETH VA low");
	tap_eq(roce_get32(p + 20), 0x1000, "RETH R_Key");
	tap_eq(roce_get32(p + 24), 2500, "RETH DMA length");
	tap_ok(!memcmp(p + 28, payload, 5) && !p[33] && !p[34] && !p[35],
	       "payload, then zero pad");
	tap_eq(roce_bth_ackreq(p), 0, "no AckReq on FIRST");

	w.opcode = ROCE_WRITE_MIDDLE;
	w.ackreq = true;
	n = roce_pkt_build(&w, p, sizeof(p));
	tap_eq(n, ROCE_BTH_LEN + 5 + 3 + ROCE_ICRC_LEN, "WRITE MIDDLE: no RETH");
	tap_eq(roce_bth_ackreq(p), 1, "AckReq");
	tap_eq(roce_bth_dqpn(p), 0x11, "destination QP read back");
	roce_bth_set_psn(p, 0x1fffffe);
	tap_eq(roce_bth_psn(p), 0xfffffe, "PSN rewritten modulo 2^24");

	w.opcode = ROCE_READ_RESP_MIDDLE;
	tap_eq(roce_pkt_len(&w), ROCE_BTH_LEN + 5 + 3 + ROCE_ICRC_LEN,
	       "READ RESPONSE MIDDLE: no AETH");
	w.opcode = ROCE_READ_RESP_LAST;
	tap_eq(roce_pkt_len(&w), ROCE_BTH_LEN + ROCE_AETH_LEN + 5 + 3 + ROCE_ICRC_LEN,
	       "READ RESPONSE LAST: AETH");
}

static void test_cnp_ud(void)
{
	const struct roce_pkt c = { .opcode = ROCE_OPCODE_CNP, .dqpn = 0x111 };
	const struct roce_pkt u = {
		.opcode = ROCE_UD_SEND_ONLY, .migreq = true, .dqpn = 1,
		.qkey = 0x80010000, .src_qp = 0x22,
	};
	uint8_t p[64];

	tap_eq(roce_pkt_build(&c, p, sizeof(p)),
	       ROCE_BTH_LEN + ROCE_CNP_RSVD_LEN + ROCE_ICRC_LEN, "CNP: 16 reserved bytes");
	tap_eq(p[0], 0x81, "CNP opcode");
	tap_eq(p[1], 0, "CNP: no MigReq");
	tap_eq(roce_pkt_build(&u, p, sizeof(p)),
	       ROCE_BTH_LEN + ROCE_DETH_LEN + ROCE_ICRC_LEN, "UD SEND ONLY: DETH");
	tap_eq(roce_get32(p + 12), 0x80010000, "DETH Q_Key");
	tap_eq(roce_get24(p + 17), 0x22, "DETH source QP");
}

static void test_parse_u64(void)
{
	uint64_t v = 0;

	tap_eq(cli_parse_u64("4791", 1, 65535, &v), 0, "decimal");
	tap_eq(v, 4791, "decimal value");
	tap_eq(cli_parse_u64("0x11", 0, 0xffffff, &v), 0, "hex");
	tap_eq(v, 0x11, "hex value");
	tap_eq(cli_parse_u64("010", 0, 100, &v), 0, "a leading 0 is decimal");
	tap_eq(v, 10, "not octal");
	tap_eq(cli_parse_u64("", 0, 1, &v), -ENODATA, "empty");
	tap_eq(cli_parse_u64("0x", 0, 1, &v), -EINVAL, "0x alone");
	tap_eq(cli_parse_u64("12x", 0, 100, &v), -EINVAL, "trailing junk");
	tap_eq(cli_parse_u64("-1", 0, 100, &v), -EINVAL, "no sign");
	tap_eq(cli_parse_u64(" 1", 0, 100, &v), -EINVAL, "no blanks");
	tap_eq(cli_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -EOVERFLOW,
	       "2^64 overflows");
	tap_eq(cli_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0, "2^64 - 1");
	tap_eq(cli_parse_u64("16777216", 0, 0xffffff, &v), -ERANGE, "above max");
}

int main(void)
{
	test_ack();
	test_requests();
	test_cnp_ud();
	test_parse_u64();
	return tap_done();
}
