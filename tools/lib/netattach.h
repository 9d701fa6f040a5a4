/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An observer's XDP (ingress) and tc egress programs on an interface (and
 * roceinject's one tc program, ingress or egress),
 * attached so that nothing stays behind: XDP and tcx (6.6+) as links, gone
 * with the process even after SIGKILL; on older kernels a clsact filter of
 * a fixed handle and priority, which the next run removes when no process
 * holds its program any more. An XDP program already on the interface is
 * never replaced. Shared by rocelat, rocediag and roceinject.
 */
#ifndef AGENTXDP_NETATTACH_H
#define AGENTXDP_NETATTACH_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

enum netattach_mode { NETATTACH_AUTO, NETATTACH_SKB, NETATTACH_NATIVE };

/* the tc filter's identity: a leftover of a killed run is recognised by
 * handle, priority and program name (and no process holding it) */
struct netattach_tc_id {
	__u32 handle;
	__u32 prio;
	const char *prog_name;
	const char *tool;	/* in messages: "another rocelat running?" */
};

struct netattach {
	const char *name;
	int ifindex;
	struct bpf_link *xdp_link;	/* default mode: libbpf's link */
	int xdp_link_fd;		/* forced mode: raw link fd */
	const char *xdp_mode_name;	/* "native", "generic", ... */
	int tcx_fd;			/* tcx link (6.6+), -1 none */
	bool tc_attached;		/* clsact filter (older kernels) */
	bool tc_hook_created;
	bool tc_ingress;		/* the tc program is on ingress */
	const struct netattach_tc_id *tc_id;
};

/* f for interface name (dies when it does not exist) */
void netattach_init(struct netattach *f, const char *name);
/* XDP prog on f in mode; 0, or a negative errno after a one-line error */
int netattach_xdp(struct netattach *f, struct bpf_program *prog, enum netattach_mode mode);
/* tc egress prog on f (tcx, else clsact with id); 0 or negative errno
 * after a one-line error. ROCELAT_FORCE_CLSACT in the environment skips
 * tcx (tests of the older kernels' path). */
int netattach_tc_egress(struct netattach *f, struct bpf_program *prog,
			const struct netattach_tc_id *id);
/* the same at tc ingress (ingress true) or egress */
int netattach_tc(struct netattach *f, struct bpf_program *prog,
		 const struct netattach_tc_id *id, bool ingress);
/* a clsact filter of id that no process holds removed (a watchdog's
 * cleanup after its tool was killed), and with remove_hook the clsact
 * qdisc too (the killed run had created it) */
void netattach_tc_leftover(struct netattach *f, const struct netattach_tc_id *id,
			   bool ingress, bool remove_hook);
/* everything of f detached (and the clsact qdisc removed if created here) */
void netattach_detach(struct netattach *f);
/* "(XDP native, tcx egress)" for banners */
const char *netattach_describe(const struct netattach *f, char *buf, int len);
/* a note on stderr when a mirror/SPAN port is not promiscuous */
void netattach_warn_promisc(const struct netattach *f);

#endif
