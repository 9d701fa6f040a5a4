// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the watchdog that cleans up after roceinject (roceinject_guard.h) */
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
#include "roceinject_guard.h"
#include "roceinject_load.h"
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

/*
 * The watchdog: reads what the tool attached ('F' a clsact filter, 'I' on
 * ingress, 'C' the clsact qdisc made by the tool) until EOF (the tool's
 * end, however it ended), then removes what is left. Ctrl-C reaches the
 * whole process group: the watchdog ignores it and ends after the tool.
 */
static void guard_watchdog(const struct cli_env *cli, const char *ifname, bool fq,
			   int ifindex, int rd)
{
	bool filter = false, ingress = false, hook = false;
	struct netattach na;
	char c;
	ssize_t n;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	while ((n = read(rd, &c, 1)) > 0 || (n < 0 && errno == EINTR)) {
		filter |= n > 0 && c == 'F';
		ingress |= n > 0 && c == 'I';
		hook |= n > 0 && c == 'C';
	}
	if (fq)
		fq_request(ifindex, RTM_DELQDISC);
	if (filter) {
		netattach_init(&na, ifname, cli_ifindex(cli, ifname));
		netattach_tc_leftover(&na, &inject_tc_id,
				      ingress ? NETATTACH_INGRESS : NETATTACH_EGRESS, hook);
	}
	_exit(0);
}

static int guard_add_fq(struct inject_guard *g, const char *ifname)
{
	int err = fq_request(g->ifindex, RTM_NEWQDISC);

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
	g->fq = true;
	return 0;
}

int inject_guard_start(struct inject_guard *g, const struct cli_env *cli, const char *ifname,
		       bool fq)
{
	int p[2], err;

	g->ifindex = cli_ifindex(cli, ifname);
	g->pipe_wr = -1;
	if (fq && (err = guard_add_fq(g, ifname)))
		return err;
	if (pipe2(p, O_CLOEXEC) || (g->watchdog = fork()) < 0) {
		err = -errno;
		if (g->fq)
			fq_request(g->ifindex, RTM_DELQDISC);
		g->fq = false;
		cli_bpf_err("start the watchdog", err);
		return err;
	}
	if (!g->watchdog) {
		close(p[1]);
		guard_watchdog(cli, ifname, g->fq, g->ifindex, p[0]);
	}
	close(p[0]);
	g->pipe_wr = p[1];
	return 0;
}

void inject_guard_attached(struct inject_guard *g, const struct netattach *f,
			   const struct netattach_tc_id *id)
{
	char msg[3];
	int n = 0;

	bool in = f->tc_attached[NETATTACH_INGRESS];

	if (!in && !f->tc_attached[NETATTACH_EGRESS])
		return;
	msg[n++] = 'F';
	if (in)
		msg[n++] = 'I';
	if (f->tc_hook_created)
		msg[n++] = 'C';
	if (write(g->pipe_wr, msg, n) != n)
		cli_err("cannot tell the watchdog about the tc filter: %s", strerror(errno));
}

void inject_guard_end(struct inject_guard *g)
{
	if (g->pipe_wr < 0)
		return;
	close(g->pipe_wr);
	g->pipe_wr = -1;
	while (waitpid(g->watchdog, NULL, 0) < 0 && errno == EINTR)
		;
	g->fq = false;
}
