/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rdmaqp's BPF side on ib_core and ib_uverbs, fentry where allowed, else
 * kprobes (tools/rdmaqp/rdmaqp_load.c) */
#ifndef AGENTXDP_RDMAQP_LOAD_H
#define AGENTXDP_RDMAQP_LOAD_H
#include <stdbool.h>

#define RDMAQP_MODULE "ib_core"
#define RDMAQP_UVERBS "ib_uverbs"

struct cli_env;
struct rdmaqp_bpf;

struct rdmaqp_load_opts {
	const struct cli_env *cli;	/* the caller's common options: -v */
	bool force_kprobe;
};

struct rdmaqp_hooks {
	bool fentry;		/* fentry, else kprobes */
	int nhooks, missing;	/* of the hooks, missing in this kernel */
};

/* loaded and attached; NULL with err set (no ib_core BTF, neither fentry
 * nor kprobes, a required function missing), or after a one-line error
 * with err "" when open, load or attach failed */
struct rdmaqp_bpf *rdmaqp_load(const struct rdmaqp_load_opts *o, struct rdmaqp_hooks *hk,
			       char *err, int errlen);

#endif
