// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test-only XDP programs around the shared parser (tests/unit/parse_decap.c):
 * each runs pkt_parse_eth() on the frame BPF_PROG_TEST_RUN hands it and
 * leaves the verdict and the pkt_info in globals for the test to read.
 * parse_decap follows tunnels as a mirror-port caller would (decap from a
 * const volatile, like a tool's targ_decap); parse_plain is a caller that
 * never asked for it; the *_local pair differ only in where pkt_info is.
 * All go through the quick pre-filter first, as rocelat does: a frame it
 * rejects leaves verdict PARSE_T_FILTERED. parse_kernel and parse_kmem
 * read the same frame as kernel memory, the way the tracing tools read
 * an sk_buff's: by bpf_probe_read_kernel() (SRC_KERNEL) and by plain loads
 * through bpf_rdonly_cast(p, 0) (SRC_KMEM, where the kernel has it; the
 * test loads parse_kmem only then). parse_skb_decap is never attached:
 * loading it has the verifier pass the sk_buff flavour of decap.
 * parse_fast_qpn is roceinject's order: pkt_fast_classify() first (its
 * answer left in fast_class/fast_qpn, pkt_fast_not_roce()'s in
 * fast_not), then the full parse without decap.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>
#include "lib/skb.bpf.h"

#define PARSE_T_FILTERED	100

const volatile bool targ_decap = true;
const volatile __u16 targ_roce_port = ROCE_V2_PORT;

int verdict;
struct pkt_info info;
int skb_verdict;
int fast_ok;		/* PKT_FAST_ROCE */
int fast_class, fast_not;
__u32 fast_qpn;
struct pkt_info skb_info;

/*
 * local: the pkt_info on the stack and copied out after, as rocelat keeps
 * it; else straight into the global, as tools that parse into a map value
 * or ring buffer record have it. Both for the cost comparison: clang
 * treats the two differently.
 */
static __always_inline void parse_t_run(struct xdp_md *ctx, bool decap, bool local,
					enum pkt_src_kind kind)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pkt_cursor c = {
		.kind = SRC_PACKET, .data = data, .data_end = data_end,
		.decap = decap,
	};
	struct pkt_info stack_pi = {}, *pi = local ? &stack_pi : &info;

	if (kind != SRC_PACKET) {
		c.kind = kind;
		c.kbase = kind == SRC_KMEM ? bpf_rdonly_cast(data, 0) : data;
		c.klen = data_end - data;
	}
	if (!local)
		__builtin_memset(&info, 0, sizeof(info));
	if (pkt_fast_not_roce_decap(data, data_end, targ_roce_port, decap))
		verdict = PARSE_T_FILTERED;
	else
		verdict = pkt_parse_eth(&c, targ_roce_port, pi);
	if (local)
		info = stack_pi;	/* a tool would use every field */
}

/* one XDP program per way of calling the parser */
#define PARSE_T_PROG(name, decap, local, kind)				\
SEC("xdp")								\
int name(struct xdp_md *ctx)						\
{									\
	parse_t_run(ctx, decap, local, kind);				\
	return XDP_PASS;						\
}

PARSE_T_PROG(parse_decap, targ_decap, false, SRC_PACKET)
PARSE_T_PROG(parse_plain, false, false, SRC_PACKET)
PARSE_T_PROG(parse_decap_local, targ_decap, true, SRC_PACKET)
PARSE_T_PROG(parse_plain_local, false, true, SRC_PACKET)
PARSE_T_PROG(parse_kernel, targ_decap, false, SRC_KERNEL)
PARSE_T_PROG(parse_kmem, targ_decap, false, SRC_KMEM)

SEC("xdp")
int parse_fast_qpn(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 qpn = 0;

	fast_class = pkt_fast_classify(data, data_end, targ_roce_port, &qpn);
	fast_ok = fast_class == PKT_FAST_ROCE;
	fast_not = pkt_fast_not_roce(data, data_end, targ_roce_port);
	fast_qpn = qpn;
	parse_t_run(ctx, false, false, SRC_PACKET);
	return XDP_PASS;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(parse_skb_decap, struct sk_buff *skb)
{
	struct pkt_info pi = {};

	skb_verdict = skb_parse_decap(skb, SKB_BTF, false, targ_decap,
				      targ_roce_port, &pi);
	skb_info = pi;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
