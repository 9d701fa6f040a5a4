// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the running kernel allows (probe.h), asked of the kernel by
 * loading and attaching a tiny program or opening a kprobe event, each
 * answer kept for the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "btf_enum.h"
#include "probe.h"

static const struct bpf_insn ret0[] = {
	{ .code = 0xb7, .dst_reg = 0, .imm = 0 },	/* r0 = 0 */
	{ .code = 0x95 },				/* exit */
};

bool probe_module_loaded(const char *module)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", module);
	return access(path, R_OK) == 0;
}

bool probe_module_present(const char *module)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/module/%s", module);
	return access(path, F_OK) == 0;
}

/* BTF object fd (0 for vmlinux) and type id of name in module or vmlinux */
static int find_btf_id(const char *name, const char *module, __u32 kind,
		       int *obj_fd)
{
	struct btf *vmlinux = btf_vmlinux(), *btf = NULL;
	__u32 id = 0;
	int type_id = -ENOENT;

	*obj_fd = 0;
	if (!vmlinux)
		return -ENOENT;
	if (!module) {
		type_id = btf__find_by_name_kind(vmlinux, name, kind);
		goto out;
	}
	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char mod_name[64] = {};
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		info.name = (unsigned long)mod_name;
		info.name_len = sizeof(mod_name);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
		    strcmp(mod_name, module)) {
			close(fd);
			continue;
		}
		btf = btf__load_from_kernel_by_id_split(id, vmlinux);
		if (!libbpf_get_error(btf))
			type_id = btf__find_by_name_kind(btf, name, kind);
		btf__free(btf);
		if (type_id > 0)
			*obj_fd = fd;
		else
			close(fd);
		break;
	}
out:
	return type_id;
}

/* insns as a tracing program on name loads, and with attach also attaches */
static bool probe_tracing_prog(enum bpf_attach_type type, const char *name,
			       const char *module, __u32 kind,
			       const struct bpf_insn *insns, size_t n, bool attach)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type);
	int obj_fd, id, prog_fd, link_fd;

	id = find_btf_id(name, module, kind, &obj_fd);
	if (id <= 0)
		return false;
	opts.attach_btf_id = id;
	opts.attach_btf_obj_fd = obj_fd;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, n, &opts);
	if (obj_fd > 0)
		close(obj_fd);
	if (prog_fd < 0)
		return false;
	if (!attach) {
		close(prog_fd);
		return true;
	}
	link_fd = bpf_raw_tracepoint_open(NULL, prog_fd);
	close(prog_fd);
	if (link_fd < 0)
		return false;
	close(link_fd);
	return true;
}

static bool probe_tracing(enum bpf_attach_type type, const char *name,
			  const char *module, __u32 kind)
{
	return probe_tracing_prog(type, name, module, kind, ret0, 2, true);
}

bool probe_untrusted_mem(const char *tp)
{
	struct btf *vmlinux = btf_vmlinux();
	int cast = vmlinux ? btf__find_by_name_kind(vmlinux, "bpf_rdonly_cast", BTF_KIND_FUNC) : -1;
	char name[128];
	/* r0 = bpf_rdonly_cast(0, 0); r0 = *(u8 *)(r0 + 0); return 0: loaded,
	 * never attached, so never run */
	const struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 1, .imm = 0 },	/* r1 = 0 */
		{ .code = 0xb7, .dst_reg = 2, .imm = 0 },	/* r2 = 0: void */
		{ .code = 0x85, .src_reg = 2 /* BPF_PSEUDO_KFUNC_CALL */,
		  .imm = cast },
		{ .code = 0x71, .dst_reg = 0, .src_reg = 0 },	/* ldx u8 */
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },
		{ .code = 0x95 },
	};

	if (cast <= 0)
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return probe_tracing_prog(BPF_TRACE_RAW_TP, name, NULL, BTF_KIND_TYPEDEF,
				  insns, sizeof(insns) / sizeof(insns[0]), false);
}

int probe_func_arg_index(const char *func, const char *module, const char *arg)
{
	struct btf *vmlinux = btf_vmlinux(), *btf = NULL;
	const struct btf_param *p;
	const struct btf_type *t;
	int id, idx = -1;

	if (!vmlinux)
		return -1;
	if (module) {
		char path[256];

		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", module);
		btf = btf__parse_split(path, vmlinux);
		if (libbpf_get_error(btf)) {
			btf = NULL;
			goto out;
		}
	}
	id = btf__find_by_name_kind(btf ? btf : vmlinux, func, BTF_KIND_FUNC);
	if (id <= 0)
		goto out;
	t = btf__type_by_id(btf ? btf : vmlinux, id);
	t = btf__type_by_id(btf ? btf : vmlinux, t->type);
	if (!t || !btf_is_func_proto(t))
		goto out;
	p = btf_params(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf ? btf : vmlinux, p[i].name_off), arg)) {
			idx = i;
			break;
		}
out:
	btf__free(btf);
	return idx;
}

bool probe_tp_btf(const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return probe_tracing(BPF_TRACE_RAW_TP, name, NULL, BTF_KIND_TYPEDEF);
}

int probe_tp_nargs(const char *tp)
{
	struct btf *vmlinux = btf_vmlinux();
	const struct btf_type *t;
	char name[128];
	int id;

	if (!vmlinux)
		return -1;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -1;
	/* typedef -> pointer -> prototype (void *__data, the arguments) */
	t = btf__type_by_id(vmlinux, btf__resolve_type(vmlinux, id));
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(vmlinux, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1)
		return -1;
	return btf_vlen(t) - 1;
}

bool probe_btf_func(const char *func, const char *module)
{
	int obj_fd, id = find_btf_id(func, module, BTF_KIND_FUNC, &obj_fd);

	if (obj_fd > 0)
		close(obj_fd);
	return id > 0;
}

bool probe_fentry(const char *func, const char *module)
{
	return probe_tracing(BPF_TRACE_FENTRY, func, module, BTF_KIND_FUNC);
}

bool probe_bpf_loop(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_loop, NULL) > 0;
}

bool probe_for_each_map_elem(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_SCHED_CLS,
				       BPF_FUNC_for_each_map_elem, NULL) > 0;
}

/* the kernel accepts the BPF atomic op (BPF_CMPXCHG, BPF_ADD | BPF_FETCH
 * ...) on a stack slot: r0 = op((u64 *)(r10 - 8), r1) */
static bool probe_atomic(int op)
{
	const struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },	/* r0 = 0 */
		/* *(u64 *)(r10 - 8) = r0 */
		{ .code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = 10, .src_reg = 0, .off = -8 },
		{ .code = 0xb7, .dst_reg = 1, .imm = 1 },	/* r1 = 1 */
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = 10, .src_reg = 1,
		  .off = -8, .imm = op },
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },	/* r0 = 0 */
		{ .code = 0x95 },				/* exit */
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* an XDP program may say it handles multi-buffer frames: prog_flags
 * BPF_F_XDP_HAS_FRAGS (5.18+; an older kernel refuses the unknown flag),
 * with the helpers such a program reads the later buffers by
 * (bpf_xdp_load_bytes, bpf_xdp_get_buff_len, both 5.18) */
bool probe_xdp_frags(void)
{
	const struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 2 },	/* r0 = XDP_PASS */
		{ .code = 0x95 },				/* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = BPF_F_XDP_HAS_FRAGS);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), &o);

	if (fd < 0)
		return false;
	close(fd);
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_xdp_load_bytes, NULL) > 0;
}

bool probe_atomic_cmpxchg(void)
{
	return probe_atomic(BPF_CMPXCHG);
}

bool probe_atomic_fetch_add(void)
{
	return probe_atomic(BPF_ADD | BPF_FETCH);
}

bool probe_kprobe(const char *func)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	char buf[32] = {};
	long fd;
	int f;

	f = open("/sys/bus/event_source/devices/kprobe/type", O_RDONLY);
	if (f < 0)
		return false;
	if (read(f, buf, sizeof(buf) - 1) <= 0) {
		close(f);
		return false;
	}
	close(f);
	attr.type = atoi(buf);
	attr.config1 = (unsigned long)func;	/* kprobe_func */
	fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* func of module present for the mode: its BTF (fentry), else a kprobe */
static bool hook_func_exists(const char *func, const char *module, bool fentry)
{
	if (module && !probe_module_loaded(module))
		return false;
	return fentry ? probe_btf_func(func, module) : probe_kprobe(func);
}

static void hook_autoload(struct bpf_program *p, bool on)
{
	if (p)
		bpf_program__set_autoload(p, on);
}

int probe_hooks_pick(struct probe_hook *hooks, int n, const char *module, bool fentry,
		     const char *what, void (*warn)(const struct probe_hook *h), char *err,
		     int errlen)
{
	int missing = 0;

	for (int i = 0; i < n; i++) {
		struct probe_hook *h = &hooks[i];

		h->attached = NULL;
		for (int j = 0; j < PROBE_HOOK_ALTS; j++) {
			bool pick = !h->attached && h->funcs[j] &&
				    hook_func_exists(h->funcs[j], module, fentry);

			if (pick)
				h->attached = h->funcs[j];
			hook_autoload(h->fentry[j], pick && fentry);
			hook_autoload(h->kprobe[j], pick && !fentry);
			/* the return twin goes with the first name */
			if (j == 0) {
				hook_autoload(h->fexit, pick && fentry);
				hook_autoload(h->kretprobe, pick && !fentry);
			}
		}
		if (h->attached)
			continue;
		if (h->required) {
			snprintf(err, errlen, "%s: %s not found in this kernel's %s", what,
				 h->funcs[0], module ? module : "vmlinux");
			return -1;
		}
		if (warn)
			warn(h);
		missing++;
	}
	return missing;
}

int probe_hooks_mode(const char *func, const char *module, bool force_kprobe,
		     const char *what, char *err, int errlen)
{
	if (!force_kprobe && probe_fentry(func, module))
		return 1;
	if (probe_kprobe(func))
		return 0;
	snprintf(err, errlen, "%s: this kernel allows neither fentry on %s%s nor kprobes", what,
		 module ? module : "vmlinux", force_kprobe ? " (not tried: --kprobe)" : "");
	return -1;
}
