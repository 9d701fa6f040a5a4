/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the running kernel allows, asked of the kernel itself by loading
 * and attaching a two-instruction program (or opening a kprobe event):
 * this machine's 6.18 kernel has BTF and tp_btf but refuses fentry with
 * EPERM and has no kprobes; Debian's 6.1 has all of them.
 */
#ifndef AGENTXDP_PROBE_H
#define AGENTXDP_PROBE_H

#include <stdbool.h>

/* tp_btf/<tp> loads and attaches */
bool probe_tp_btf(const char *tp);
/* arguments of tracepoint tp as its BTF prototype has them (kfree_skb:
 * 2 before 5.17, 3 with the drop reason, 4 with 6.18's rx_sk), -1
 * without vmlinux BTF */
int probe_tp_nargs(const char *tp);
/* a tp_btf/<tp> program may load kernel memory through the untrusted
 * pointer bpf_rdonly_cast(p, 0) makes (6.18 can; 6.1 has no such kfunc) */
bool probe_untrusted_mem(const char *tp);
/* fentry on func (module NULL: vmlinux) loads and attaches */
bool probe_fentry(const char *func, const char *module);
/* func has BTF (module NULL: vmlinux): once probe_fentry() said fentry
 * works at all, this is the cheap check for further functions */
bool probe_btf_func(const char *func, const char *module);
/* the bpf_loop() helper (5.17+) is there for XDP programs */
bool probe_bpf_loop(void);
/* the bpf_for_each_map_elem() helper (5.13+) is there for tc programs */
bool probe_for_each_map_elem(void);
/* the BPF atomic compare-and-exchange instruction (5.12+) */
bool probe_atomic_cmpxchg(void);
/* BPF atomic fetch-and-add, its old value used (5.12+) */
bool probe_atomic_fetch_add(void);
/* XDP programs may take multi-buffer frames (BPF_F_XDP_HAS_FRAGS, 5.18+) */
bool probe_xdp_frags(void);
/* a kprobe on func can be created */
bool probe_kprobe(const char *func);
/* the module's BTF is in /sys/kernel/btf (the module is loaded) */
bool probe_module_loaded(const char *module);
/* the module is loaded (/sys/module), with its BTF or not: before 5.11
 * (CONFIG_DEBUG_INFO_BTF_MODULES) modules have none */
bool probe_module_present(const char *module);

/* position of the parameter named arg of func (module NULL: vmlinux) in
 * its BTF prototype, -1 when func or arg is not there: tells which of two
 * signatures a kernel has (ipt_do_table's changed in 5.16) */
int probe_func_arg_index(const char *func, const char *module, const char *arg);

/*
 * A tool's hooks, each with an fentry and a kprobe program (and the fexit
 * and kretprobe of its return, if any) for one function, or for the first
 * present of up to PROBE_HOOK_ALTS names (a function renamed between
 * kernel lines): the programs of the mode chosen set to load for the
 * hooks present, the others not. tools/rdmaqp and tools/rxeqp pick theirs
 * so.
 */
#define PROBE_HOOK_ALTS 2

struct bpf_program;

struct probe_hook {
	const char *funcs[PROBE_HOOK_ALTS];	/* the names, tried in order */
	struct bpf_program *fentry[PROBE_HOOK_ALTS], *kprobe[PROBE_HOOK_ALTS];
	struct bpf_program *fexit, *kretprobe;	/* the return twin of funcs[0]'s */
	bool required;
	const char *attached;	/* the name picked, set by probe_hooks_pick() */
};

/*
 * fentry (else kprobe) programs of each hook present in module (its BTF
 * loaded; NULL: vmlinux) set to load; missing hooks named with warn(func)
 * when warn is given. Returns how many are missing, or -1 with err set
 * ("WHAT: FUNC not found in this kernel's MODULE") when a required one is.
 */
int probe_hooks_pick(struct probe_hook *hooks, int n, const char *module, bool fentry,
		     const char *what, void (*warn)(const struct probe_hook *h), char *err,
		     int errlen);

/* the way a tool's BPF side can attach to module's function func (one it
 * always needs): 1 fentry, 0 kprobes, -1 neither (err set: "WHAT: this
 * kernel allows neither fentry on MODULE nor kprobes"); force_kprobe
 * skips fentry */
int probe_hooks_mode(const char *func, const char *module, bool force_kprobe,
		     const char *what, char *err, int errlen);

#endif
