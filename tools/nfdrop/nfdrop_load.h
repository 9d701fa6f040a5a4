/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nfdrop's BPF side opened, loaded and attached (tools/nfdrop/nfdrop_load.c):
 * with the fexit programs where the kernel allows them, else kfree_skb
 * NETFILTER_DROP and the stack. Shared by nfdrop and rocediag.
 */
#ifndef AGENTXDP_NFDROP_LOAD_H
#define AGENTXDP_NFDROP_LOAD_H
#include <stdbool.h>
#include <linux/types.h>

struct cli_env;
struct nfdrop_bpf;
struct ksyms;

enum nfdrop_method { NFDROP_METHOD_AUTO, NFDROP_METHOD_FEXIT, NFDROP_METHOD_KFREE,
		     NFDROP_METHOD_NR };

struct nfdrop_load_opts {
	bool all;		/* -A: any packet, else RoCE v2 only */
	int port;		/* -P, 0 any */
	int ifindex;		/* -i within netns_inum, 0 any */
	unsigned int netns_inum;	/* -N (or -i's namespace), 0 any */
	bool events;		/* -e: the ring buffer, else counts */
	bool stack;		/* -s */
	unsigned int snaplen;	/* -w: bytes of each packet into its event, 0 none */
	int method;		/* enum nfdrop_method */
};

/* what was attached, for banners */
struct nfdrop_attached {
	bool nft, ipt, ip6t, icmp_tp, icmp6_out, tp_btf;
	bool by_location;	/* no drop reason (before 5.17): frees in nf_hook_slow */
	bool reject[4];
};

/*
 * What nfdrop's parts share, passed to the names part (which gives the
 * evidence part reject_complete) and the output part: filled by
 * nfdrop_ctx_init() and nfdrop_load().
 */
struct nfdrop_ctx {
	const struct ksyms *ksyms;	/* the kernel's symbols (the caller's) */
	const struct cli_env *cli;	/* the caller's common options: --roce-port, -v */
	/* NETFILTER_DROP's drop reason value, -1 none; before 5.17 (no
	 * reasons) nfdrop_load() sets 1, which the BPF side gives to
	 * nf_hook_slow's frees */
	long long nf_drop;
	/* NOT_SPECIFIED's value, -1 none: nf_queue()'s frees of packets a
	 * queue verdict found no listener for */
	long long not_specified;
	/* every REJECT reply is seen (nf_send_unreach traced) */
	bool reject_complete;
};

/* ctx with the caller's symbols and common options and NETFILTER_DROP's
 * value (the drop reasons loaded first: drop_reasons_load()) */
void nfdrop_ctx_init(struct nfdrop_ctx *ctx, const struct ksyms *ks,
		     const struct cli_env *cli);
/* kfree_skb passes a drop reason (5.17+); before, nf_hook_slow's frees
 * are the netfilter drops */
bool nfdrop_has_reason(void);
/*
 * Loaded and attached (fexit refused or failing in auto mode: without),
 * the counter window of netns started (ev_counters_start), the rest of
 * ctx filled; NULL after a one-line error (also when the kernel has
 * reasons but no NETFILTER_DROP).
 */
struct nfdrop_bpf *nfdrop_load(const struct nfdrop_load_opts *o, struct nfdrop_attached *att,
			       struct nfdrop_ctx *ctx);
/* "fexit nft_do_chain + kfree_skb" or "kfree_skb NETFILTER_DROP + stack via tp_btf" */
const char *nfdrop_method_str(const struct nfdrop_attached *att, char *buf, int len);

/*
 * The counts map drained: up to max keys with their packets and REJECTed
 * packets (summed over CPUs), each key deleted once read, between two
 * rule-counter snapshots of the namespaces (ev_counters_pre/_post), so
 * every drop drained moved its rule's counter inside the window. Returns
 * how many keys.
 */
struct nfd_key;
int nfdrop_drain(struct nfdrop_bpf *obj, struct nfd_key *keys, unsigned long long *packets,
		 unsigned long long *rejected, int max);
/* the same without the snapshots, which would move the counter windows
 * of -e's events (nfdrop.c's flush_events()) */
int nfdrop_drain_counts(struct nfdrop_bpf *obj, struct nfd_key *keys,
			unsigned long long *packets, unsigned long long *rejected, int max);

#endif
