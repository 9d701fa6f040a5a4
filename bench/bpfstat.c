// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * BPF run-time statistics for the benches (bench/lib.bash).
 *
 *   bpfstat hold        turn the statistics on until SIGINT/SIGTERM
 *   bpfstat show ID...  "id run_time_ns run_cnt name" of each program
 *
 * hold uses BPF_ENABLE_STATS, not the kernel.bpf_stats_enabled sysctl:
 * the kernel keeps the statistics on while any such file descriptor is
 * open, whatever another process writes to the sysctl meanwhile. A bench
 * that set and restored the sysctl read zero calls whenever a second
 * bench or test on the same machine restored its own old value first.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

static volatile sig_atomic_t bpfstat_stop;

static void bpfstat_on_signal(int sig)
{
	bpfstat_stop = 1;
}

static int bpfstat_hold(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0) {
		fprintf(stderr, "bpfstat: enable BPF statistics: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGINT, bpfstat_on_signal);
	signal(SIGTERM, bpfstat_on_signal);
	printf("enabled\n");
	fflush(stdout);
	while (!bpfstat_stop)
		pause();
	close(fd);
	return 0;
}

static int bpfstat_show(int n, char **ids)
{
	int rc = 0;

	for (int i = 0; i < n; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(strtoul(ids[i], NULL, 10));

		/* a program gone since its id was read is an error the
		 * caller must see, not a program that ran zero times */
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
			fprintf(stderr, "bpfstat: program %s: %s\n", ids[i], strerror(errno));
			rc = 1;
		} else {
			printf("%u %llu %llu %s\n", info.id,
			       (unsigned long long)info.run_time_ns,
			       (unsigned long long)info.run_cnt, info.name);
		}
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "hold"))
		return bpfstat_hold();
	if (argc >= 2 && !strcmp(argv[1], "show"))
		return bpfstat_show(argc - 2, argv + 2);
	fprintf(stderr, "usage: bpfstat hold | show ID...\n");
	return 2;
}
