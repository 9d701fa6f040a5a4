// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpflood [-o OPCODE] DST PORT COUNT: COUNT RoCE-shaped datagrams to
 * DST:PORT (IPv4 or IPv6) from one socket, as fast as it goes: a BTH with
 * OPCODE (hex, default 04 = RC SEND_ONLY), P_Key 0xffff, destination QP
 * 0x12, AckReq, PSN 1..COUNT; 16 bytes of payload ('X') and a zero ICRC.
 * Open loop, nothing is awaited. The tests' ax_send_roce and the benches'
 * floods. Prints what it sent and how long that took; exits 1 unless every
 * datagram went out.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int usage(void)
{
	fprintf(stderr, "usage: udpflood [-o OPCODE] DST PORT COUNT\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	unsigned char pkt[12 + 16 + 4] = { 0x04, 0x40, 0xff, 0xff, 0, 0, 0, 0x12, 0x80 };
	unsigned long n, sent = 0, op;
	struct timespec t0, t1;
	char *end;
	int fd, c;

	while ((c = getopt(argc, argv, "o:")) != -1) {
		if (c != 'o')
			return usage();
		op = strtoul(optarg, &end, 16);
		if (*end || end == optarg || op > 0xff) {
			fprintf(stderr, "udpflood: bad opcode %s\n", optarg);
			return 2;
		}
		pkt[0] = op;
	}
	if (argc - optind != 3)
		return usage();
	n = strtoul(argv[optind + 2], &end, 10);
	if (*end || !n || n > 0xffffff) {
		fprintf(stderr, "udpflood: bad count %s\n", argv[optind + 2]);
		return 2;
	}
	if (getaddrinfo(argv[optind], argv[optind + 1], &hints, &ai)) {
		fprintf(stderr, "udpflood: bad address %s port %s\n", argv[optind], argv[optind + 1]);
		return 2;
	}
	memset(pkt + 12, 'X', 16);
	/* connected (a send costs less than with a route lookup each) */
	fd = socket(ai->ai_family, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		perror("udpflood");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 1; i <= n; i++) {
		pkt[9] = i >> 16;
		pkt[10] = i >> 8;
		pkt[11] = i;
		/* an ICMP port unreachable from a closed port fails the next
		 * send once, before anything goes out: send that one again */
		for (int try = 0; try < 3; try++) {
			if (send(fd, pkt, sizeof(pkt), 0) == sizeof(pkt)) {
				sent++;
				break;
			}
			if (errno != ECONNREFUSED)
				break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("udpflood: sent=%lu seconds=%.3f\n", sent,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	freeaddrinfo(ai);
	close(fd);
	return sent == n ? 0 : 1;
}
