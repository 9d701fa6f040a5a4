// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --delay's fq qdisc and its watchdog (roceinject_fq.h) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include "roceinject_fq.h"
#include "lib/cli.h"

struct fq_req {
	struct nlmsghdr nh;
	struct tcmsg tc;
	char attrs[64];
};

/* RTM_NEWQDISC (fq, exclusive) or RTM_DELQDISC of our root qdisc; 0 or
 * the kernel's -errno */
static int fq_request(int ifindex, int type)
{
	struct fq_req req = {
		.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
		.nh.nlmsg_type = type,
		.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK |
				  (type == RTM_NEWQDISC ? NLM_F_CREATE | NLM_F_EXCL : 0),
		.tc.tcm_family = AF_UNSPEC,
		.tc.tcm_ifindex = ifindex,
		.tc.tcm_handle = INJECT_FQ_HANDLE,
		.tc.tcm_parent = TC_H_ROOT,
	};
	struct { struct nlmsghdr nh; struct nlmsgerr err; char more[256]; } ack;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int s, err;
	ssize_t n;

	if (type == RTM_NEWQDISC) {
		struct rtattr *a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));

		a->rta_type = TCA_KIND;
		a->rta_len = RTA_LENGTH(sizeof("fq"));
		memcpy(RTA_DATA(a), "fq", sizeof("fq"));
		req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
	}
	s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0)
		return -errno;
	if (sendto(s, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(s);
		return err;
	}
	n = recv(s, &ack, sizeof(ack), 0);
	err = n < 0 ? -errno : n < (ssize_t)sizeof(ack.nh) + (ssize_t)sizeof(int) ||
	      ack.nh.nlmsg_type != NLMSG_ERROR ? -EPROTO : ack.err.error;
	close(s);
	return err;
}

/* the watchdog: waits for EOF on the pipe (the tool's end, however it
 * ended), then removes the qdisc. Ctrl-C reaches the whole process group:
 * the watchdog ignores it and ends after the tool. */
static void fq_watchdog(int ifindex, int rd)
{
	char c;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	while (read(rd, &c, 1) < 0 && errno == EINTR)
		;
	fq_request(ifindex, RTM_DELQDISC);
	_exit(0);
}

int inject_fq_add(struct inject_fq *fq, const char *ifname)
{
	int p[2], err;

	fq->ifindex = cli_ifindex(ifname);
	err = fq_request(fq->ifindex, RTM_NEWQDISC);
	if (err == -EEXIST || err == -EBUSY) {
		cli_err("%s has a root qdisc of its own: --delay needs an fq qdisc there; "
			"remove it first (tc qdisc del dev %s root)", ifname, ifname);
		return err;
	}
	if (err == -ENOENT || err == -EOPNOTSUPP) {
		cli_err("this kernel has no fq qdisc (sch_fq), which --delay needs to "
			"hold packets until their departure time");
		return err;
	}
	if (err) {
		cli_bpf_err("add an fq qdisc", err);
		return err;
	}
	fq->added = true;
	if (pipe2(p, O_CLOEXEC) || (fq->watchdog = fork()) < 0) {
		err = -errno;
		fq_request(fq->ifindex, RTM_DELQDISC);
		fq->added = false;
		cli_bpf_err("start the qdisc's watchdog", err);
		return err;
	}
	if (!fq->watchdog) {
		close(p[1]);
		fq_watchdog(fq->ifindex, p[0]);
	}
	close(p[0]);
	fq->pipe_wr = p[1];
	return 0;
}

void inject_fq_remove(struct inject_fq *fq)
{
	if (!fq->added)
		return;
	close(fq->pipe_wr);
	while (waitpid(fq->watchdog, NULL, 0) < 0 && errno == EINTR)
		;
	fq->added = false;
}
