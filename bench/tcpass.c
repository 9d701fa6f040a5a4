// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An empty tc program for the benches (bench/roceinject.sh): the floor a
 * tc program's cost is compared with, on the same hook and packets.
 *
 *   tcpass IFACE egress|ingress   hold it there until SIGINT/SIGTERM
 *
 * The program is "r0 = TC_ACT_UNSPEC; exit": it touches no packet byte
 * and hands every packet on to the next program (TCX_NEXT), so a program
 * attached after it runs on the same packets. Attached as a tcx link
 * (6.6+), else as a clsact filter of priority 1 (before any of the
 * suite's), removed at exit. Prints "attached tcx" or "attached tc".
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* libbpf 1.1's uapi header predates tcx (6.6); the kernel's numbers */
#define TCPASS_TCX_INGRESS	46
#define TCPASS_TCX_EGRESS	47
#define TCPASS_PRIO		1
#define TCPASS_HANDLE		0x7A55

static volatile sig_atomic_t tcpass_stop;

static void tcpass_on_signal(int sig)
{
	tcpass_stop = 1;
}

static int tcpass_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = -1 },	/* r0 = TC_ACT_UNSPEC */
		{ .code = 0x95 },				/* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o);

	return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "tc_pass", "GPL", insns, 2, &o);
}

/* a clsact filter where tcx is missing; 0 or -errno */
static int tcpass_clsact(int fd, int ifindex, bool ingress, struct bpf_tc_hook *hook)
{
	LIBBPF_OPTS(bpf_tc_opts, to, .prog_fd = fd, .handle = TCPASS_HANDLE,
		    .priority = TCPASS_PRIO);
	int err;

	hook->ifindex = ifindex;
	hook->attach_point = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
	err = bpf_tc_hook_create(hook);
	if (err && err != -EEXIST)
		return err;
	return bpf_tc_attach(hook, &to);
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_tc_hook, hook);
	LIBBPF_OPTS(bpf_tc_opts, del, .handle = TCPASS_HANDLE, .priority = TCPASS_PRIO);
	int ifindex, fd, lfd, err;
	bool ingress;

	if (argc != 3 || (strcmp(argv[2], "egress") && strcmp(argv[2], "ingress"))) {
		fprintf(stderr, "usage: tcpass IFACE egress|ingress\n");
		return 2;
	}
	ingress = !strcmp(argv[2], "ingress");
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "tcpass: no interface %s\n", argv[1]);
		return 1;
	}
	fd = tcpass_prog();
	if (fd < 0) {
		fprintf(stderr, "tcpass: load the empty tc program: %s\n", strerror(errno));
		return 1;
	}
	lfd = bpf_link_create(fd, ifindex, ingress ? TCPASS_TCX_INGRESS : TCPASS_TCX_EGRESS, NULL);
	if (lfd < 0 && (err = tcpass_clsact(fd, ifindex, ingress, &hook))) {
		fprintf(stderr, "tcpass: attach to %s %s: %s\n", argv[1], argv[2], strerror(-err));
		return 1;
	}
	signal(SIGINT, tcpass_on_signal);
	signal(SIGTERM, tcpass_on_signal);
	printf("attached %s\n", lfd >= 0 ? "tcx" : "tc");
	fflush(stdout);
	while (!tcpass_stop)
		pause();
	if (lfd >= 0)
		close(lfd);
	else
		bpf_tc_detach(&hook, &del);
	close(fd);
	return 0;
}
