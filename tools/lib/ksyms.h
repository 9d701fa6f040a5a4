/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel symbols by address, from /proc/kallsyms, for the tools that
 * name the function on a kernel stack (rxedrop, nfdrop, rocediag): the
 * table, the lookup, and why it may be empty.
 */
#ifndef AGENTXDP_KSYMS_H
#define AGENTXDP_KSYMS_H

#include <stdbool.h>
#include <linux/types.h>

struct ksym {
	unsigned long addr;
	char *name;
	char *module;		/* NULL for vmlinux */
};

struct ksyms;

/* loads /proc/kallsyms (addresses are 0 without root: then NULL, errno) */
struct ksyms *ksyms_load(void);
void ksyms_free(struct ksyms *ks);
/* why ksyms_load() failed (its errno), one line for the user: EPERM names
 * what hides the addresses (CAP_SYSLOG, kernel.kptr_restrict) */
const char *ksyms_strerror(int err);
/* the symbol containing addr, NULL when none */
const struct ksym *ksyms_find(const struct ksyms *ks, unsigned long addr);
/* text range [start, end) of the function name (end: the next symbol),
 * for a BPF program's rodata; true, or false (both untouched) when name
 * is not a function in kallsyms */
bool ksyms_range(const struct ksyms *ks, const char *name, __u64 *start, __u64 *end);
/* "name+0xoff" into buf; the address in hex when unknown */
const char *ksyms_format(const struct ksyms *ks, unsigned long addr,
			 char *buf, int len, bool with_offset);

#endif
