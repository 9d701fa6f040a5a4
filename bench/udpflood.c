// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udpflood DST PORT COUNT: COUNT RoCE-shaped datagrams (BTH SEND_ONLY with
 * AckReq, PSN = sequence) to DST:PORT as fast as one socket goes. For
 * benchmarks only: open loop, no ACKs. Prints what it sent. */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	unsigned char pkt[12 + 32 + 4] = { 0x04, 0x40, 0xff, 0xff, 0, 0, 0, 0x12, 0x80 };
	unsigned long n, sent = 0;
	struct timespec t0, t1;
	int fd;

	if (argc != 4 || !(n = strtoul(argv[3], NULL, 10))) {
		fprintf(stderr, "usage: udpflood DST PORT COUNT\n");
		return 1;
	}
	if (getaddrinfo(argv[1], argv[2], &hints, &ai)) {
		fprintf(stderr, "udpflood: bad address %s port %s\n", argv[1], argv[2]);
		return 1;
	}
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
		if (send(fd, pkt, sizeof(pkt), 0) == sizeof(pkt))
			sent++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("udpflood: sent=%lu seconds=%.3f\n", sent,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	freeaddrinfo(ai);
	return sent == n ? 0 : 1;
}
