// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* XDP and tc egress attach of an observer (netattach.h) */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/cli.h"
#include "lib/netattach.h"

/* libbpf 1.1's uapi header predates tcx (6.6); the kernel's number */
#define AX_BPF_TCX_INGRESS	46
#define AX_BPF_TCX_EGRESS	47

void netattach_init(struct netattach *f, const char *name, int ifindex)
{
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->ifindex = ifindex;
	f->xdp_link_fd = -1;
	f->tcx_fd[NETATTACH_EGRESS] = f->tcx_fd[NETATTACH_INGRESS] = -1;
}

static const char *const dir_names[NETATTACH_DIRS] = { "egress", "ingress" };
static const int tcx_types[NETATTACH_DIRS] = { AX_BPF_TCX_EGRESS, AX_BPF_TCX_INGRESS };
static const int tc_points[NETATTACH_DIRS] = { BPF_TC_EGRESS, BPF_TC_INGRESS };

const char *netattach_describe(const struct netattach *f, char *buf, int len)
{
	const int in = NETATTACH_INGRESS, out = NETATTACH_EGRESS;
	size_t o;

	if (f->tcx_fd[in] >= 0 || f->tc_attached[in]) {
		o = snprintf(buf, len, "%s ingress", f->tcx_fd[in] >= 0 ? "tcx" : "tc");
		if (o >= (size_t)len)
			return buf;
		if (f->xdp_taken)
			snprintf(buf + o, len - o, " (XDP taken)");
		else if (f->xdp_mtu_refused)
			snprintf(buf + o, len - o, " (XDP refused at MTU %d)", f->mtu);
	} else if (f->xdp_mode_name || !(f->tcx_fd[out] >= 0 || f->tc_attached[out])) {
		o = snprintf(buf, len, "XDP %s", f->xdp_mode_name ? f->xdp_mode_name : "off");
		/* jumbo: say that frames over a page are taken whole */
		if (o < (size_t)len && f->xdp_mode_name && f->xdp_frags && f->mtu > 1500)
			snprintf(buf + o, len - o, " with frags, MTU %d", f->mtu);
	} else
		buf[0] = 0;
	if (f->tcx_fd[out] >= 0 || f->tc_attached[out]) {
		o = strlen(buf);
		snprintf(buf + o, len - o, "%s%s egress", o ? ", " : "",
			 f->tcx_fd[out] >= 0 ? "tcx" : "tc");
	}
	return buf;
}

static const char *xdp_mode_str(__u8 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV: return "native";
	case XDP_ATTACHED_SKB: return "generic";
	case XDP_ATTACHED_HW: return "offload";
	case XDP_ATTACHED_MULTI: return "multiple modes";
	default: return "unknown";
	}
}

/* does /proc/PID/fd/FD hold BPF program prog_id? (its fdinfo) */
static bool fd_holds_prog(const char *pid, const char *fd, __u32 prog_id)
{
	char path[600], line[128], link[64];
	bool held = false;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	if (strcmp(link, "anon_inode:bpf-prog"))
		return false;
	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned int id;

		if (sscanf(line, "prog_id: %u", &id) == 1 && id == prog_id)
			held = true;
	}
	fclose(f);
	return held;
}

/* a process that holds BPF program prog_id open (from /proc fdinfo): its
 * pid, 0 when none does, -1 when /proc cannot tell */
static long prog_holder(__u32 prog_id)
{
	DIR *proc = opendir("/proc"), *fds;
	struct dirent *p, *d;
	char path[300];
	long pid = 0;

	if (!proc)
		return -1;
	while (!pid && (p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.255s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!pid && (d = readdir(fds)))
			if (fd_holds_prog(p->d_name, d->d_name, prog_id))
				pid = strtol(p->d_name, NULL, 10);
		closedir(fds);
	}
	closedir(proc);
	return pid;
}

/* "id 42 "xdp_fw", held by xdpd (pid 1234)" for messages */
static void prog_describe(__u32 id, char *buf, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);
	char comm[32] = "", path[64];
	/* before our own fd of it, which the scan would find */
	long pid = prog_holder(id);
	int fd = bpf_prog_get_fd_by_id(id);
	size_t o;
	FILE *f;

	if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &ilen))
		info.name[0] = 0;
	if (fd >= 0)
		close(fd);
	o = snprintf(buf, len, "id %u", id);
	if (info.name[0] && o < len)
		o += snprintf(buf + o, len - o, " \"%s\"", info.name);
	if (pid <= 0 || o >= len)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "r");
	if (f && fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = 0;
	if (f)
		fclose(f);
	snprintf(buf + o, len - o, ", held by %s (pid %ld)", comm[0] ? comm : "?", pid);
}

/* whose XDP program f has, "id 42 "xdp_fw", held by ..., generic mode",
 * into who; false when none */
static bool xdp_holder(struct netattach *f, char *who, size_t len)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	size_t o;

	if (bpf_xdp_query(f->ifindex, 0, &q) || q.attach_mode == XDP_ATTACHED_NONE)
		return false;
	/* whose it is: a firewall, another tool of the suite, a CNI */
	prog_describe(q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id,
		      who, len);
	o = strlen(who);
	snprintf(who + o, len - o, ", %s mode", xdp_mode_str(q.attach_mode));
	return true;
}

/* true (and a one-line error) when some XDP program is already there */
static bool xdp_occupied(struct netattach *f)
{
	char who[160];

	if (!xdp_holder(f, who, sizeof(who)))
		return false;
	cli_err("%s already has an XDP program (%s): not replacing it; "
		"detach it first or use another interface", f->name, who);
	return true;
}

/* the interface's MTU, 0 when it cannot be read */
static int if_mtu(const char *name)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = 0;

	if (s < 0)
		return 0;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (!ioctl(s, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	close(s);
	return mtu;
}

/* the kernel's answer to an XDP attach over netlink into msg (its extack
 * text, "" when it gave none): the link-based attach that the tools use
 * passes no such message back. 0 when the kernel took the program after
 * all (it is removed at once), else its negative errno. */
static int xdp_netlink_try(struct netattach *f, int fd, __u32 flags, char *msg, size_t len)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[64];
	} req = {
		.nh = { .nlmsg_type = RTM_SETLINK, .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK },
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = f->ifindex },
	};
	static char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct rtattr *xdp = (struct rtattr *)req.attrs, *a;
	int s, one = 1, n, err = -EPROTO;

	msg[0] = 0;
	xdp->rta_type = IFLA_XDP | NLA_F_NESTED;
	a = (struct rtattr *)((char *)xdp + RTA_LENGTH(0));
	*a = (struct rtattr){ .rta_type = IFLA_XDP_FD, .rta_len = RTA_LENGTH(4) };
	memcpy(RTA_DATA(a), &fd, 4);
	a = (struct rtattr *)((char *)a + RTA_ALIGN(a->rta_len));
	*a = (struct rtattr){ .rta_type = IFLA_XDP_FLAGS, .rta_len = RTA_LENGTH(4) };
	flags |= XDP_FLAGS_UPDATE_IF_NOEXIST;
	memcpy(RTA_DATA(a), &flags, 4);
	xdp->rta_len = RTA_LENGTH(2 * RTA_ALIGN(RTA_LENGTH(4)));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi)) + RTA_ALIGN(xdp->rta_len);
	s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0)
		return -errno;
	setsockopt(s, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (send(s, &req, req.nh.nlmsg_len, 0) < 0 || (n = recv(s, buf, sizeof(buf), 0)) <= 0) {
		close(s);
		return -errno;
	}
	close(s);
	for (struct nlmsghdr *nh = (void *)buf; NLMSG_OK(nh, (unsigned int)n);
	     nh = NLMSG_NEXT(nh, n)) {
		struct nlmsgerr *e = NLMSG_DATA(nh);
		int alen;

		if (nh->nlmsg_type != NLMSG_ERROR)
			continue;
		err = e->error;
		if (!(nh->nlmsg_flags & NLM_F_ACK_TLVS))
			break;
		/* the error quotes only the request's header (NLM_F_CAPPED
		 * aside); the TLVs follow it */
		a = (struct rtattr *)((char *)e + sizeof(*e) +
			(nh->nlmsg_flags & NLM_F_CAPPED ? 0 : req.nh.nlmsg_len - sizeof(req.nh)));
		alen = (int)nh->nlmsg_len - (int)((char *)a - (char *)nh);
		for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
			if (a->rta_type == NLMSGERR_ATTR_MSG)
				snprintf(msg, len, "%s", (char *)RTA_DATA(a));
		break;
	}
	if (!err) {	/* taken: not what was asked, remove it */
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = fd);

		bpf_xdp_detach(f->ifindex, flags & ~XDP_FLAGS_UPDATE_IF_NOEXIST, &o);
	}
	return err;
}

/* an attach refused for the MTU: ERANGE (veth), or EINVAL/EOPNOTSUPP on
 * a jumbo MTU (virtio_net, mlx5 ... say "MTU too large" that way) */
static bool xdp_mtu_refusal(int err, int mtu)
{
	return err == -ERANGE || ((err == -EINVAL || err == -EOPNOTSUPP) && mtu > 1500);
}

/* why XDP was refused at f's MTU, one line, into why */
static void xdp_mtu_why(struct netattach *f, struct bpf_program *prog,
			enum netattach_mode mode, char *why, size_t len)
{
	bool frags = bpf_program__flags(prog) & BPF_F_XDP_HAS_FRAGS;
	__u32 flags = mode == NETATTACH_SKB ? XDP_FLAGS_SKB_MODE :
		      mode == NETATTACH_NATIVE ? XDP_FLAGS_DRV_MODE : 0;
	char kmsg[128];
	size_t o;

	o = snprintf(why, len, "%s", frags ?
		     "the driver takes no multi-buffer (frags) XDP program at this MTU" :
		     "the XDP program has no frags (BPF_F_XDP_HAS_FRAGS, kernel 5.18+), "
		     "which the driver needs at this MTU");
	if (o < len && xdp_netlink_try(f, bpf_program__fd(prog), flags, kmsg, sizeof(kmsg)) &&
	    kmsg[0])
		snprintf(why + o, len - o, " (kernel: \"%s\")", kmsg);
}

/* prog on f's XDP hook in mode, errors unreported: 0 or a negative errno */
static int xdp_attach(struct netattach *f, struct bpf_program *prog, enum netattach_mode mode)
{
	int fd = bpf_program__fd(prog);

	if (mode == NETATTACH_AUTO) {
		f->xdp_link = bpf_program__attach_xdp(prog, f->ifindex);
		return f->xdp_link ? 0 : -errno;
	} else {
		LIBBPF_OPTS(bpf_link_create_opts, lo,
			    .flags = mode == NETATTACH_SKB ? XDP_FLAGS_SKB_MODE
							  : XDP_FLAGS_DRV_MODE);

		f->xdp_link_fd = bpf_link_create(fd, f->ifindex, BPF_XDP, &lo);
		return f->xdp_link_fd < 0 ? f->xdp_link_fd : 0;
	}
}

/* a refused XDP attach said in one line */
static void xdp_attach_err(struct netattach *f, struct bpf_program *prog,
			   enum netattach_mode mode, int err)
{
	char what[64], why[320];

	if (xdp_mtu_refusal(err, f->mtu)) {
		xdp_mtu_why(f, prog, mode, why, sizeof(why));
		cli_err("%sXDP refused on %s at MTU %d: %s; %s", mode == NETATTACH_NATIVE ?
			"native " : "", f->name, f->mtu, why, mode == NETATTACH_AUTO ?
			"try --skb-mode" : "try --skb-mode, or no mode option (tc ingress)");
		return;
	}
	if (mode == NETATTACH_NATIVE && (err == -EOPNOTSUPP || err == -EINVAL)) {
		cli_err("native XDP is not supported on %s: try --skb-mode", f->name);
		return;
	}
	if (err == -EOPNOTSUPP || err == -EINVAL) {
		cli_err("cannot attach XDP to %s: %s; try --skb-mode%s", f->name,
			strerror(-err), mode == NETATTACH_SKB ? " without a bond/team port" : "");
		return;
	}
	snprintf(what, sizeof(what), "attach XDP to %s", f->name);
	cli_bpf_err(what, err);
}

/* after an attach: the mode the kernel chose, and whether frags count */
static void xdp_attached(struct netattach *f, struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (!bpf_xdp_query(f->ifindex, 0, &q))
		f->xdp_mode_name = xdp_mode_str(q.attach_mode);
	else
		f->xdp_mode_name = "unknown";
	f->xdp_frags = bpf_program__flags(prog) & BPF_F_XDP_HAS_FRAGS;
}

int netattach_xdp(struct netattach *f, struct bpf_program *prog, enum netattach_mode mode)
{
	int err;

	if (xdp_occupied(f))
		return -EBUSY;
	f->mtu = if_mtu(f->name);
	err = xdp_attach(f, prog, mode);
	if (err) {
		if ((err == -EBUSY || err == -EEXIST) && xdp_occupied(f))
			return err;
		xdp_attach_err(f, prog, mode, err);
		return err;
	}
	xdp_attached(f, prog);
	return 0;
}

/* one of the suite's priorities (netattach.h) */
static bool suite_prio(__u32 prio)
{
	return prio == NETATTACH_PRIO_ROCEINJECT || prio == NETATTACH_PRIO_ROCELAT ||
	       prio == NETATTACH_PRIO_ROCEDIAG;
}

/* count the netlink dump's filters on s: all, and those (into *foreign)
 * of a priority not the suite's; -errno on an error */
static int tc_dump_count(int s, int *foreign)
{
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nh;
	unsigned int left;
	int n = 0, len;

	for (;;) {
		len = recv(s, buf, sizeof(buf), 0);
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			return len < 0 ? -errno : -EPROTO;
		left = len;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
			struct tcmsg *t = NLMSG_DATA(nh);

			if (nh->nlmsg_type == NLMSG_DONE)
				return n;
			if (nh->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			if (nh->nlmsg_type != RTM_NEWTFILTER)
				continue;
			n++;
			*foreign += !suite_prio(TC_H_MAJ(t->tcm_info) >> 16);
		}
	}
}

/*
 * The filters on f's clsact qdisc, both directions (libbpf can query a
 * filter only by handle and priority, so a netlink dump): how many, and
 * into *foreign how many are not the suite's; -errno when it cannot tell
 */
static int tc_filters(const struct netattach *f, int *foreign)
{
	struct {
		struct nlmsghdr nh;
		struct tcmsg tc;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETTFILTER,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.tc = { .tcm_family = AF_UNSPEC, .tcm_ifindex = f->ifindex },
	};
	static const __u32 mins[] = { TC_H_MIN_EGRESS, TC_H_MIN_INGRESS };
	int s, n, total = 0;

	*foreign = 0;
	s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		req.nh.nlmsg_seq = i + 1;
		req.tc.tcm_parent = TC_H_MAKE(TC_H_CLSACT, mins[i]);
		if (send(s, &req, sizeof(req), 0) < 0) {
			total = -errno;
			break;
		}
		n = tc_dump_count(s, foreign);
		if (n < 0) {
			total = n;
			break;
		}
		total += n;
	}
	close(s);
	return total;
}

/* the clsact qdisc removed when it is ours and nothing is left on it */
static void tc_hook_remove_empty(struct netattach *f)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
		    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	int foreign;

	if (f->tc_hook_created && tc_filters(f, &foreign) == 0)
		bpf_tc_hook_destroy(&hook);
	f->tc_hook_created = false;
}

/*
 * A clsact filter of ours (one of id's handles) whose program no process
 * holds any more is the leftover of a run killed by SIGKILL (kernels
 * before 6.6, no tcx): our handle and priority, our program name, and no
 * owner. Remove it; a filter of another run (a process holds it) stays.
 */
static void remove_leftover_tc(struct netattach *f, struct bpf_tc_hook *hook,
			       enum netattach_dir dir)
{
	const struct netattach_tc_id *id = f->tc_id[dir];
	struct bpf_prog_info info;
	__u32 len;
	int pfd;

	for (__u32 h = id->handle; h < id->handle + NETATTACH_TC_SLOTS; h++) {
		LIBBPF_OPTS(bpf_tc_opts, q, .handle = h, .priority = id->prio);
		LIBBPF_OPTS(bpf_tc_opts, d, .handle = h, .priority = id->prio);

		if (bpf_tc_query(hook, &q) || !q.prog_id)
			continue;
		pfd = bpf_prog_get_fd_by_id(q.prog_id);
		if (pfd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(pfd, &info, &len) ||
		    strncmp(info.name, id->prog_name, sizeof(info.name) - 1)) {
			close(pfd);
			continue;
		}
		close(pfd);
		if (prog_holder(q.prog_id))
			continue;
		if (!bpf_tc_detach(hook, &d))
			cli_err("removed a leftover tc %s filter of a killed %s "
				"run on %s (prog id %u)", dir_names[dir], id->tool,
				f->name, q.prog_id);
	}
}

/* the first free one of id's handles on hook: 0, or -EEXIST when all
 * are taken, or another negative errno */
static int tc_attach_slot(struct netattach *f, struct bpf_tc_hook *hook, int fd,
			  const struct netattach_tc_id *id, enum netattach_dir dir)
{
	int err = -EEXIST;

	for (__u32 h = id->handle; err == -EEXIST && h < id->handle + NETATTACH_TC_SLOTS; h++) {
		LIBBPF_OPTS(bpf_tc_opts, to, .prog_fd = fd, .handle = h, .priority = id->prio);

		err = bpf_tc_attach(hook, &to);
		if (!err)
			f->tc_handle[dir] = h;
	}
	return err;
}

/* prog on f's tc dir: tcx, else a clsact filter with id */
int netattach_tc(struct netattach *f, struct bpf_program *prog,
		 const struct netattach_tc_id *id, enum netattach_dir dir)
{
	int fd = bpf_program__fd(prog), err;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
		    .attach_point = tc_points[dir]);
	char what[64];
	int foreign;

	/* tcx (6.6+): a link, gone with the process even after SIGKILL.
	 * libbpf 1.1 has no wrapper, but bpf_link_create passes an attach
	 * type it does not know straight to the kernel. */
	if (!getenv("AGENTXDP_FORCE_CLSACT")) {
		f->tcx_fd[dir] = bpf_link_create(fd, f->ifindex, tcx_types[dir], NULL);
		if (f->tcx_fd[dir] >= 0)
			return 0;
		if (f->tcx_fd[dir] != -EINVAL && f->tcx_fd[dir] != -EOPNOTSUPP) {
			snprintf(what, sizeof(what), "attach tc %s (tcx) to %s",
				 dir_names[dir], f->name);
			cli_bpf_err(what, f->tcx_fd[dir]);
			return f->tcx_fd[dir];
		}
	}
	f->tcx_fd[dir] = -1;
	f->tc_id[dir] = id;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		snprintf(what, sizeof(what), "create clsact qdisc on %s", f->name);
		cli_bpf_err(what, err);
		return err;
	}
	/* a qdisc holding only the suite's filters is the suite's: whichever
	 * of its tools leaves it empty removes it */
	f->tc_hook_created |= !err || (tc_filters(f, &foreign) > 0 && !foreign);
	remove_leftover_tc(f, &hook, dir);
	err = tc_attach_slot(f, &hook, fd, id, dir);
	if (err) {
		if (err == -EEXIST)
			cli_err("%s: tc %s filter handles 0x%x-0x%x prio 0x%x are all in "
				"use (%d other %s runs?)%s", f->name, dir_names[dir],
				id->handle, id->handle + NETATTACH_TC_SLOTS - 1, id->prio,
				NETATTACH_TC_SLOTS, id->tool,
				dir == NETATTACH_EGRESS ? "; or use --no-egress" : "");
		else {
			snprintf(what, sizeof(what), "attach tc %s to %s", dir_names[dir], f->name);
			cli_bpf_err(what, err);
		}
		return err;
	}
	f->tc_attached[dir] = true;
	return 0;
}

int netattach_tc_egress(struct netattach *f, struct bpf_program *prog,
			const struct netattach_tc_id *id)
{
	return netattach_tc(f, prog, id, NETATTACH_EGRESS);
}

void netattach_tc_leftover(struct netattach *f, const struct netattach_tc_id *id,
			   enum netattach_dir dir, bool remove_hook)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
		    .attach_point = tc_points[dir]);

	f->tc_id[dir] = id;
	remove_leftover_tc(f, &hook, dir);
	f->tc_hook_created = remove_hook;
	tc_hook_remove_empty(f);
}

int netattach_ingress(struct netattach *f, struct bpf_program *xdp,
		      struct bpf_program *tc_in, enum netattach_mode mode,
		      const struct netattach_tc_id *in_id)
{
	char who[160];

	char why[320];
	int err;

	/* an explicit XDP mode asks for XDP: fail as netattach_xdp() does */
	if (mode != NETATTACH_AUTO || !tc_in)
		return netattach_xdp(f, xdp, mode);
	if (xdp_holder(f, who, sizeof(who))) {
		cli_err("note: %s already has an XDP program (%s): left in place, "
			"timing from tc ingress instead", f->name, who);
		f->xdp_taken = true;
		return netattach_tc(f, tc_in, in_id, NETATTACH_INGRESS);
	}
	f->mtu = if_mtu(f->name);
	err = xdp_attach(f, xdp, mode);
	if (!err) {
		xdp_attached(f, xdp);
		return 0;
	}
	if (!xdp_mtu_refusal(err, f->mtu))
		return netattach_xdp(f, xdp, mode);	/* says why, once */
	/* a jumbo MTU the driver takes no XDP at (a kernel before 5.18, or
	 * a driver without multi-buffer XDP): tc ingress sees every frame */
	xdp_mtu_why(f, xdp, mode, why, sizeof(why));
	cli_err("note: XDP refused on %s at MTU %d: %s; timing from tc ingress instead",
		f->name, f->mtu, why);
	f->xdp_mtu_refused = true;
	return netattach_tc(f, tc_in, in_id, NETATTACH_INGRESS);
}

void netattach_detach(struct netattach *f)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex);

	for (int dir = 0; dir < NETATTACH_DIRS; dir++) {
		if (f->tc_attached[dir]) {
			LIBBPF_OPTS(bpf_tc_opts, d, .handle = f->tc_handle[dir],
				    .priority = f->tc_id[dir]->prio);

			hook.attach_point = tc_points[dir];
			bpf_tc_detach(&hook, &d);
			f->tc_attached[dir] = false;
		}
		if (f->tcx_fd[dir] >= 0)
			close(f->tcx_fd[dir]);
		f->tcx_fd[dir] = -1;
	}
	tc_hook_remove_empty(f);
	if (f->xdp_link_fd >= 0)
		close(f->xdp_link_fd);
	f->xdp_link_fd = -1;
	bpf_link__destroy(f->xdp_link);
	f->xdp_link = NULL;
}

void netattach_warn_promisc(const struct netattach *f)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", f->name);
	if (!ioctl(s, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_PROMISC))
		cli_err("note: %s is not promiscuous; a SPAN port usually needs "
			"'ip link set %s promisc on'", f->name, f->name);
	close(s);
}

