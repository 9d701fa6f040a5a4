/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names of enum values read from the running kernel's BTF, never from a
 * table of ours: drop reasons differ between kernels (NETFILTER_DROP is 7
 * on 6.1 and 12 on 6.18) and grow with every release.
 */
#ifndef AGENTXDP_BTF_ENUM_H
#define AGENTXDP_BTF_ENUM_H

#include <stdbool.h>

struct btf_enum_names;
struct btf;

/* the running kernel's BTF, parsed once per process and shared (parsing
 * takes seconds under software emulation); NULL without BTF */
struct btf *btf_vmlinux(void);

/* the same from a module's BTF (which includes vmlinux's types), falling back
 * to vmlinux alone: enum ib_qp_state is in 6.1's vmlinux, in ib_core elsewhere */
struct btf_enum_names *btf_enum_load_module(const char *module, const char *enum_name,
					    const char *prefix);
void btf_enum_free(struct btf_enum_names *e);
/* name of a value, NULL when unknown */
const char *btf_enum_name(const struct btf_enum_names *e, long long value);

/*
 * enum skb_drop_reason, with subsystem-encoded values (bits 16+ name the
 * subsystem in enum skb_drop_reason_subsys, since 6.5) decoded as
 * "SUBSYS:code" or the subsystem enum's own name where BTF has it.
 */
int drop_reasons_load(void);
const char *drop_reason_name(unsigned int reason, char *buf, int len);
/* reason value by name ("NETFILTER_DROP"), -1 when this kernel lacks it */
long long drop_reason_value(const char *name);

#endif
