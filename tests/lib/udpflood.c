// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpflood [-o OPCODE] [-C] DST PORT COUNT: COUNT RoCE-shaped datagrams to
 * DST:PORT (IPv4 or IPv6) from one socket, as fast as it goes: a BTH with
 * OPCODE (hex, default 04 = RC SEND_ONLY), P_Key 0xffff, destination QP
 * 0x12, AckReq, PSN 1..COUNT; 16 bytes of payload ('X') and a zero ICRC.
 * Open loop, nothing is awaited. The tests' ax_send_roce and the benches'
 * floods. Prints what it sent and how long that took; exits 1 unless every
 * datagram went out.
 * -C: a wrong UDP checksum (IPv4 only): the UDP header is written by hand
 * on a raw socket, source port 49152; a receiver that verifies checksums
 * (rx checksum offload off on a veth) drops each with UDP_CSUM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "../../tools/lib/roce_pkt.h"

/* ones' complement sum of a UDP/IPv4 datagram and its pseudo-header */
static uint16_t udp4_csum(struct in_addr src, struct in_addr dst,
			  const unsigned char *d, size_t len)
{
	uint32_t sum = IPPROTO_UDP + len;
	const unsigned char *a = (const void *)&src, *b = (const void *)&dst;

	sum += (a[0] << 8 | a[1]) + (a[2] << 8 | a[3]);
	sum += (b[0] << 8 | b[1]) + (b[2] << 8 | b[3]);
	for (size_t i = 0; i < len; i += 2)
		sum += d[i] << 8 | (i + 1 < len ? d[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int usage(void)
{
	fprintf(stderr, "usage: udpflood [-o OPCODE] [-C] DST PORT COUNT\n");
	return 2;
}

struct uf_opts {
	unsigned long n, op;
	bool bad_csum;
	struct addrinfo *ai;
};

/* options and arguments; returns 0, or the exit status of a usage error */
static int uf_parse(int argc, char **argv, struct uf_opts *o)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM };
	char *end;
	int c;

	o->op = ROCE_SEND_ONLY;
	while ((c = getopt(argc, argv, "o:C")) != -1) {
		if (c == 'C') {
			o->bad_csum = true;
			continue;
		}
		if (c != 'o')
			return usage();
		o->op = strtoul(optarg, &end, 16);
		if (*end || end == optarg || o->op > 0xff) {
			fprintf(stderr, "udpflood: bad opcode %s\n", optarg);
			return 2;
		}
	}
	if (argc - optind != 3)
		return usage();
	o->n = strtoul(argv[optind + 2], &end, 10);
	if (*end || !o->n || o->n > 0xffffff) {
		fprintf(stderr, "udpflood: bad count %s\n", argv[optind + 2]);
		return 2;
	}
	if (getaddrinfo(argv[optind], argv[optind + 1], &hints, &o->ai)) {
		fprintf(stderr, "udpflood: bad address %s port %s\n", argv[optind], argv[optind + 1]);
		return 2;
	}
	if (o->bad_csum && o->ai->ai_family != AF_INET) {
		fprintf(stderr, "udpflood: -C needs an IPv4 destination\n");
		return 2;
	}
	return 0;
}

/* a UDP checksum that is never the right one (nor its other zero), never 0
 * (no checksum at all) */
static void uf_bad_csum(struct in_addr src, struct in_addr dst, unsigned char *buf, size_t len)
{
	struct udphdr *uh = (struct udphdr *)buf;
	uint16_t ok;

	uh->check = 0;
	ok = udp4_csum(src, dst, buf, len) ^ 0x5555;
	uh->check = htons(ok == 0 || ok == 0xffff ? 0x1234 : ok);
}

/* send one packet; an ICMP port unreachable from a closed port fails the
 * next send once, before anything goes out: send that one again */
static bool uf_send(int fd, const unsigned char *pkt, size_t len)
{
	for (int try = 0; try < 3; try++) {
		if (send(fd, pkt, len, 0) == (ssize_t)len)
			return true;
		if (errno != ECONNREFUSED)
			break;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct uf_opts o = {};
	unsigned char payload[16];
	struct roce_pkt roce = {
		.opcode = ROCE_SEND_ONLY, .migreq = true, .ackreq = true,
		.dqpn = 0x12, .payload = payload, .payload_len = sizeof(payload),
	};
	/* room for a UDP header in front of the BTH, for -C */
	unsigned char buf[8 + ROCE_BTH_LEN + sizeof(payload) + ROCE_ICRC_LEN];
	unsigned char *bth = buf + 8, *pkt = bth;
	size_t len = sizeof(buf) - 8;
	unsigned long sent = 0;
	struct timespec t0, t1;
	struct in_addr src = {}, dst = {};
	int fd, rc;

	rc = uf_parse(argc, argv, &o);
	if (rc)
		return rc;
	/* a SEND_ONLY with the opcode byte of -o: the payload follows the
	 * BTH whatever the opcode, no extended header */
	memset(payload, 'X', sizeof(payload));
	roce_pkt_build(&roce, bth, len);
	bth[0] = (unsigned char)o.op;
	if (o.bad_csum) {
		struct udphdr *uh = (struct udphdr *)buf;

		uh->source = htons(49152);
		uh->dest = ((struct sockaddr_in *)o.ai->ai_addr)->sin_port;
		uh->len = htons(sizeof(buf));
		pkt = buf;
		len = sizeof(buf);
	}
	/* connected (a send costs less than with a route lookup each) */
	fd = o.bad_csum ? socket(AF_INET, SOCK_RAW, IPPROTO_UDP) :
			  socket(o.ai->ai_family, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, o.ai->ai_addr, o.ai->ai_addrlen)) {
		perror("udpflood");
		return 1;
	}
	if (o.bad_csum) {
		struct sockaddr_in me;
		socklen_t ml = sizeof(me);

		if (getsockname(fd, (struct sockaddr *)&me, &ml)) {
			perror("udpflood: getsockname");
			return 1;
		}
		src = me.sin_addr;
		dst = ((struct sockaddr_in *)o.ai->ai_addr)->sin_addr;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 1; i <= o.n; i++) {
		roce_bth_set_psn(bth, i);
		if (o.bad_csum)
			uf_bad_csum(src, dst, buf, len);
		sent += uf_send(fd, pkt, len);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("udpflood: sent=%lu seconds=%.3f\n", sent,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	freeaddrinfo(o.ai);
	close(fd);
	return sent == o.n ? 0 : 1;
}
