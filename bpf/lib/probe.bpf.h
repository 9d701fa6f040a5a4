/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One hook on a kernel function, as fentry and as its kprobe fallback. */
#ifndef AGENTXDP_PROBE_BPF_H
#define AGENTXDP_PROBE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/*
 * FENTRY_OR_KPROBE(prog, func, call, args...) defines prog_fentry on
 * SEC("fentry/func") and prog_kprobe on SEC("kprobe/func"), both taking
 * func's first arguments args and returning call, an expression of them
 * (the one __always_inline handler). The loader autoloads one of the two
 * (tools/lib/probe.h tells which the kernel allows) and finds them by
 * name in the skeleton: obj->progs.prog_fentry, obj->progs.prog_kprobe.
 */
#define FENTRY_OR_KPROBE(prog, func, call, args...)			\
SEC("fentry/" #func)							\
int BPF_PROG(prog##_fentry, args)					\
{									\
	return call;							\
}									\
									\
SEC("kprobe/" #func)							\
int BPF_KPROBE(prog##_kprobe, args)					\
{									\
	return call;							\
}

/*
 * FEXIT_OR_KRETPROBE(prog, func, call, ret, args...): the same at func's
 * return, prog_fexit on SEC("fexit/func") and prog_kretprobe on
 * SEC("kretprobe/func"). ret declares the return value (int ret, void
 * *ret), which both see; args, func's arguments, only the fexit does
 * (fexit must list them all before ret), so call uses ret alone.
 */
#define FEXIT_OR_KRETPROBE(prog, func, call, ret, args...)		\
SEC("fexit/" #func)							\
int BPF_PROG(prog##_fexit, args, ret)					\
{									\
	return call;							\
}									\
									\
SEC("kretprobe/" #func)							\
int BPF_KRETPROBE(prog##_kretprobe, ret)				\
{									\
	return call;							\
}

/*
 * IN_TEXT(ret, start, end): the return address ret is inside the kernel
 * function whose text is [start, end) (the loader's ksyms_range() from
 * /proc/kallsyms). ret - 1: a return address may point just past a call
 * at a function's end; one unsigned compare, false for an empty (unknown)
 * range.
 */
#define IN_TEXT(ret, start, end) ((ret) - 1 - (start) < (end) - (start))

#endif
