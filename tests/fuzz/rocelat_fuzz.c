// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A libFuzzer target for what rocelat -r trusts least: the capture reader
 * (tools/rocelat/capture.c: classic pcap by hand, the rest by libpcap) and
 * the parser and pairing of rocelat's BPF source compiled natively
 * (tools/rocelat/rocelat_native.c), which every frame of a file reaches.
 * One input is one capture file; each of its frames runs through the
 * program at the file's clock, then a sweep and a read of the flow table,
 * as the report makes them. Built by `make fuzz` with clang's
 * -fsanitize=fuzzer,address,undefined; seeds: tests/fuzz/seeds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/types.h>
#include "capture.h"
#include "rocelat_backend.h"
#include "rocelat_native.h"

/* frames of one input at most: a bound on the time of one run */
#define FUZZ_MAX_FRAMES 4096

static struct rocelat_backend *fuzz_prog;
static int fuzz_fd = -1;

static int fuzz_flow(const void *key, const void *val, void *ctx)
{
	(*(unsigned long *)ctx)++;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* the defaults of rocelat -r: one program for the process, as
	 * rocelat_native.h says; its state carries over between inputs as
	 * it does between the files of one run */
	struct rocelat_native_cfg cfg = {
		.roce_port = 4791, .unit_ns = 1000, .timeout_ns = 1000000000ULL,
		.max_flows = 256,
	};

	fuzz_prog = rocelat_native_open(&cfg);
	fuzz_fd = memfd_create("rocelat-fuzz", 0);
	if (!fuzz_prog || fuzz_fd < 0) {
		fprintf(stderr, "rocelat_fuzz: cannot set up\n");
		exit(1);
	}
	return 0;
}

/* the input as a file at offset 0, of exactly its size */
static int fuzz_file(const uint8_t *data, size_t size, char *path, size_t plen)
{
	if (ftruncate(fuzz_fd, 0) || pwrite(fuzz_fd, data, size, 0) != (ssize_t)size)
		return -1;
	snprintf(path, plen, "/proc/self/fd/%d", fuzz_fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const unsigned char *frame;
	unsigned long long ts;
	unsigned long flows = 0;
	unsigned int len, n = 0;
	char path[64], err[256];
	struct capture *c;

	if (fuzz_file(data, size, path, sizeof(path)))
		return 0;
	c = capture_open(path, err, sizeof(err));
	if (!c)
		return 0;
	while (n++ < FUZZ_MAX_FRAMES && capture_next(c, &frame, &len, &ts) == 1) {
		fuzz_prog->set_clock(fuzz_prog, ts);
		fuzz_prog->packet(fuzz_prog, frame, len);
	}
	capture_close(c);
	fuzz_prog->sweep(fuzz_prog);
	fuzz_prog->flows_for_each(fuzz_prog, fuzz_flow, &flows);
	return 0;
}
