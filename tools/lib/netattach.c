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
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/cli.h"
#include "lib/netattach.h"

/* libbpf 1.1's uapi header predates tcx (6.6); the kernel's numbers */
#define AX_BPF_TCX_INGRESS	46
#define AX_BPF_TCX_EGRESS	47

void netattach_init(struct netattach *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->ifindex = cli_ifindex(name);
	f->xdp_link_fd = -1;
	f->tcx_fd = -1;
}

const char *netattach_describe(const struct netattach *f, char *buf, int len)
{
	const char *dir = f->tc_ingress ? "ingress" : "egress";

	if (!f->xdp_mode_name && (f->tcx_fd >= 0 || f->tc_attached)) {
		snprintf(buf, len, "%s %s", f->tcx_fd >= 0 ? "tcx" : "tc clsact", dir);
		return buf;
	}
	snprintf(buf, len, "XDP %s%s%s", f->xdp_mode_name ? f->xdp_mode_name : "off",
		 f->tcx_fd >= 0 ? ", tcx " : f->tc_attached ? ", tc " : "",
		 f->tcx_fd >= 0 || f->tc_attached ? dir : "");
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

/* true (and a one-line error) when some XDP program is already there */
static bool xdp_occupied(struct netattach *f)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(f->ifindex, 0, &q) || q.attach_mode == XDP_ATTACHED_NONE)
		return false;
	cli_err("%s already has an XDP program (id %u, %s mode): not replacing it; "
		"detach it first or use another interface", f->name,
		q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id,
		xdp_mode_str(q.attach_mode));
	return true;
}

int netattach_xdp(struct netattach *f, struct bpf_program *prog, enum netattach_mode mode)
{
	int fd = bpf_program__fd(prog), err;
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char what[64];

	if (xdp_occupied(f))
		return -EBUSY;
	if (mode == NETATTACH_AUTO) {
		f->xdp_link = bpf_program__attach_xdp(prog, f->ifindex);
		err = f->xdp_link ? 0 : -errno;
	} else {
		LIBBPF_OPTS(bpf_link_create_opts, lo,
			    .flags = mode == NETATTACH_SKB ? XDP_FLAGS_SKB_MODE
							  : XDP_FLAGS_DRV_MODE);

		f->xdp_link_fd = bpf_link_create(fd, f->ifindex, BPF_XDP, &lo);
		err = f->xdp_link_fd < 0 ? f->xdp_link_fd : 0;
	}
	if (err) {
		if ((err == -EBUSY || err == -EEXIST) && xdp_occupied(f))
			return err;
		if (mode == NETATTACH_NATIVE && (err == -EOPNOTSUPP || err == -EINVAL)) {
			cli_err("native XDP is not supported on %s: try --skb-mode", f->name);
			return err;
		}
		if (err == -EOPNOTSUPP || err == -EINVAL) {
			cli_err("cannot attach XDP to %s: %s; try --skb-mode%s", f->name,
				strerror(-err), mode == NETATTACH_SKB ? " without a bond/team port" : "");
			return err;
		}
		snprintf(what, sizeof(what), "attach XDP to %s", f->name);
		cli_bpf_err(what, err);
		return err;
	}
	if (!bpf_xdp_query(f->ifindex, 0, &q))
		f->xdp_mode_name = xdp_mode_str(q.attach_mode);
	else
		f->xdp_mode_name = "unknown";
	return 0;
}

/* ids of BPF programs some process holds open (from /proc fdinfo) */
static bool prog_held_by_process(__u32 prog_id)
{
	DIR *proc = opendir("/proc"), *fds;
	struct dirent *p, *d;
	char path[1100], line[128], link[64];
	bool held = false;

	if (!proc)
		return true;	/* cannot tell: assume held, touch nothing */
	while (!held && (p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!held && (d = readdir(fds))) {
			ssize_t n;
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name, d->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = 0;
			if (strcmp(link, "anon_inode:bpf-prog"))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", p->d_name, d->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			while (fgets(line, sizeof(line), f)) {
				unsigned int id;

				if (sscanf(line, "prog_id: %u", &id) == 1 && id == prog_id)
					held = true;
			}
			fclose(f);
		}
		closedir(fds);
	}
	closedir(proc);
	return held;
}

/*
 * A clsact filter of ours whose program no process holds any more is the
 * leftover of a run killed by SIGKILL (kernels before 6.6, no tcx): our
 * handle and priority, our program name, and no owner. Remove it.
 */
static void remove_leftover_tc(struct netattach *f, struct bpf_tc_hook *hook)
{
	const struct netattach_tc_id *id = f->tc_id;
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = id->handle, .priority = id->prio);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int pfd;

	if (bpf_tc_query(hook, &q) || !q.prog_id)
		return;
	pfd = bpf_prog_get_fd_by_id(q.prog_id);
	if (pfd < 0)
		return;
	if (bpf_obj_get_info_by_fd(pfd, &info, &len) ||
	    strncmp(info.name, id->prog_name, sizeof(info.name) - 1)) {
		close(pfd);
		return;
	}
	close(pfd);
	if (prog_held_by_process(q.prog_id))
		return;
	{
		LIBBPF_OPTS(bpf_tc_opts, d, .handle = id->handle, .priority = id->prio);

		if (!bpf_tc_detach(hook, &d))
			cli_err("removed a leftover tc %s filter of a killed %s "
				"run on %s (prog id %u)", f->tc_ingress ? "ingress" : "egress",
				id->tool, f->name, q.prog_id);
	}
}

int netattach_tc_egress(struct netattach *f, struct bpf_program *prog,
			const struct netattach_tc_id *id)
{
	return netattach_tc(f, prog, id, false);
}

int netattach_tc(struct netattach *f, struct bpf_program *prog,
		 const struct netattach_tc_id *id, bool ingress)
{
	int fd = bpf_program__fd(prog), err;
	const char *dir = ingress ? "ingress" : "egress";
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
		    .attach_point = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, to, .prog_fd = fd, .handle = id->handle,
		    .priority = id->prio);
	char what[64];

	f->tc_ingress = ingress;

	/* tcx (6.6+): a link, gone with the process even after SIGKILL.
	 * libbpf 1.1 has no wrapper, but bpf_link_create passes an attach
	 * type it does not know straight to the kernel. */
	if (!getenv("ROCELAT_FORCE_CLSACT")) {
		f->tcx_fd = bpf_link_create(fd, f->ifindex, ingress ? AX_BPF_TCX_INGRESS
					    : AX_BPF_TCX_EGRESS, NULL);
		if (f->tcx_fd >= 0)
			return 0;
		if (f->tcx_fd != -EINVAL && f->tcx_fd != -EOPNOTSUPP) {
			snprintf(what, sizeof(what), "attach tc %s (tcx) to %s", dir, f->name);
			cli_bpf_err(what, f->tcx_fd);
			return f->tcx_fd;
		}
	}
	f->tcx_fd = -1;
	f->tc_id = id;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		snprintf(what, sizeof(what), "create clsact qdisc on %s", f->name);
		cli_bpf_err(what, err);
		return err;
	}
	f->tc_hook_created = !err;
	remove_leftover_tc(f, &hook);
	err = bpf_tc_attach(&hook, &to);
	if (err) {
		if (err == -EEXIST)
			cli_err("%s: tc %s filter handle 0x%x prio 0x%x is in use "
				"(another %s running?)%s", f->name, dir,
				id->handle, id->prio, id->tool,
				ingress ? "" : "; or use --no-egress");
		else {
			snprintf(what, sizeof(what), "attach tc %s to %s", dir, f->name);
			cli_bpf_err(what, err);
		}
		return err;
	}
	f->tc_attached = true;
	return 0;
}

void netattach_tc_leftover(struct netattach *f, const struct netattach_tc_id *id,
			   bool ingress, bool remove_hook)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
		    .attach_point = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS);

	f->tc_id = id;
	f->tc_ingress = ingress;
	remove_leftover_tc(f, &hook);
	if (remove_hook) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
}

void netattach_detach(struct netattach *f)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
		    .attach_point = f->tc_ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS);

	if (f->tc_attached) {
		LIBBPF_OPTS(bpf_tc_opts, d, .handle = f->tc_id->handle,
			    .priority = f->tc_id->prio);

		bpf_tc_detach(&hook, &d);
		if (f->tc_hook_created) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
		}
		f->tc_attached = false;
	}
	if (f->tcx_fd >= 0)
		close(f->tcx_fd);
	f->tcx_fd = -1;
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

