// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rdmaqp's BPF side against the real RDMA modules of Debian's kernel
 * packages: every function it attaches to (its programs' section names)
 * must have BTF in ib_core or ib_uverbs, and every CO-RE relocation it
 * carries (its .BTF.ext: each field read, each enum value) must resolve in
 * ib_core's BTF and, with the same byte offset, in every hardware driver's
 * that has the type (mlx5_ib, irdma, bnxt_re: what libbpf matches against
 * on such a host). Nothing is listed by hand: a read added to
 * rdmaqp.bpf.c is checked by the next run.
 *
 * The modules are the ones the Soft-RoCE guests use, extracted from
 * Debian's packages by tests/vm/build-guest.sh into
 * /var/cache/agentxdp/vm/<kver>/ (AGENTXDP_VM_CACHE), with the kernel's
 * vmlinux, the base of their split BTF (read with libbpf's
 * btf__parse_split, as btf/gen-rdma-rxe.sh does through btf/btfmin.c;
 * Debian 12's bpftool cannot). 6.12's modules are .ko.xz, unpacked with
 * xz first. 5.10's modules carry no BTF (CONFIG_DEBUG_INFO_BTF_MODULES came
 * in 5.11): that is checked as a fact, since rdmaqp then runs on netlink
 * alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <libelf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "rdmaqp.skel.h"
#include "tap.h"

static const char *const kernels[] = { "5.10.0-46-amd64", "6.1.0-57-amd64",
				       "6.12.118+deb13-amd64" };
static const char *const drivers[] = { "mlx5_ib", "irdma", "bnxt_re" };

/* btf_ext's raw layout (libbpf's btf.h exposes only the bytes):
 * include/uapi/linux/btf.h has no struct for it; tools/lib/bpf/libbpf_internal.h
 * names these btf_ext_header and bpf_core_relo */
struct ext_hdr {
	__u16 magic;
	__u8 version, flags;
	__u32 hdr_len;
	__u32 func_info_off, func_info_len, line_info_off, line_info_len;
	__u32 core_relo_off, core_relo_len;
};

struct core_relo {
	__u32 insn_off, type_id, access_str_off, kind;
};

enum { K_FIELD_EXISTS = 2, K_TYPE_ID_LOCAL = 6, K_TYPE_EXISTS = 8, K_ENUMVAL_EXISTS = 10,
       K_ENUMVAL_VALUE = 11 };

/* a module's .ko (unpacked into a temporary file when .xz); NULL: absent */
static char *module_path(const char *dir, const char *mod)
{
	char cmd[1024], *path;
	static int ntmp;

	if (asprintf(&path, "%s/%s.ko", dir, mod) < 0)
		return NULL;
	snprintf(cmd, sizeof(cmd), "find '%s' -name '%s.ko*' | head -n1", dir, mod);
	FILE *p = popen(cmd, "r");
	char found[768] = "";

	if (p) {
		if (!fgets(found, sizeof(found), p))
			found[0] = 0;
		pclose(p);
	}
	found[strcspn(found, "\n")] = 0;
	free(path);
	if (!found[0])
		return NULL;
	if (strlen(found) < 3 || strcmp(found + strlen(found) - 3, ".xz"))
		return strdup(found);
	if (asprintf(&path, "/tmp/rdmaqp_btf.%d.%d.ko", getpid(), ntmp++) < 0)
		return NULL;
	snprintf(cmd, sizeof(cmd), "xz -dc '%s' > '%s'", found, path);
	if (system(cmd)) {
		free(path);
		return NULL;
	}
	return path;
}

static void module_done(char *path)
{
	if (path && !strncmp(path, "/tmp/rdmaqp_btf.", 16))
		unlink(path);
	free(path);
}

/* the name without a ___flavour suffix */
static int essential_len(const char *name)
{
	const char *p = strstr(name, "___");

	return p ? p - name : (int)strlen(name);
}

static const struct btf_type *skip_mods(const struct btf *b, __u32 id, __u32 *out)
{
	const struct btf_type *t = btf__type_by_id(b, id);

	while (t && (btf_is_typedef(t) || btf_is_const(t) || btf_is_volatile(t) ||
		     btf_is_restrict(t))) {
		id = t->type;
		t = btf__type_by_id(b, id);
	}
	if (out)
		*out = id;
	return t;
}

/* a struct or union named like the local one (flavour dropped) in target */
static __u32 find_composite(const struct btf *target, const char *name, int len)
{
	int n = btf__type_cnt(target);

	for (int id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(target, id);
		const char *tn;

		if (!btf_is_composite(t) || !t->name_off)
			continue;
		tn = btf__name_by_offset(target, t->name_off);
		if ((int)strlen(tn) == len && !strncmp(tn, name, len) && btf_vlen(t))
			return id;
	}
	return 0;
}

/* member name of t (composite) in target type tid, looked up through
 * anonymous members as libbpf does; its bit offset added to *bits */
static const struct btf_member *find_member(const struct btf *target, __u32 tid, const char *name,
					    __u32 *bits, __u32 *mtype)
{
	const struct btf_type *t = btf__type_by_id(target, tid);
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *mn = btf__name_by_offset(target, m->name_off);
		__u32 sub, b = btf_member_bit_offset(t, i);

		if (mn && *mn && !strcmp(mn, name)) {
			*bits += b;
			*mtype = m->type;
			return m;
		}
		if ((!mn || !*mn) && btf_is_composite(skip_mods(target, m->type, &sub))) {
			__u32 inner = b;

			if (find_member(target, sub, name, &inner, mtype)) {
				*bits += inner;
				return m;
			}
		}
	}
	return NULL;
}

/* what libbpf's relo_core.c:bpf_core_fields_are_compat() asks of the field
 * read: composites match composites, otherwise the same kind (enum and
 * enum64 alike); enums of the same flavour-less name (or an anonymous one);
 * arrays by their elements */
static bool fields_compat(const struct btf *local, __u32 lid, const struct btf *target, __u32 tid)
{
	for (;;) {
		const struct btf_type *l = skip_mods(local, lid, &lid);
		const struct btf_type *t = skip_mods(target, tid, &tid);
		const char *ln, *tn;

		if (!l || !t)
			return false;
		if (btf_is_composite(l) && btf_is_composite(t))
			return true;
		if (btf_is_any_enum(l) && btf_is_any_enum(t)) {
			ln = btf__name_by_offset(local, l->name_off);
			tn = btf__name_by_offset(target, t->name_off);
			return !essential_len(ln) || !*tn ||
			       ((int)strlen(tn) == essential_len(ln) && !strncmp(ln, tn, strlen(tn)));
		}
		if (btf_kind(l) != btf_kind(t))
			return false;
		if (!btf_is_array(l))
			return true;
		lid = btf_array(l)->type;
		tid = btf_array(t)->type;
	}
}

struct relo_res {
	char desc[160];		/* "ib_qp.res.type", "enum rdma_restrack_type::RDMA_RESTRACK_QP" */
	int status;		/* 1 resolved, 0 field missing, -1 root type absent */
	__u32 bits;		/* field offset in bits */
};

static void field_relo(const struct btf *local, const struct core_relo *r, const char *acc,
		       const struct btf *target, struct relo_res *o)
{
	__u32 lid, tid, mtype;
	const struct btf_type *lt = skip_mods(local, r->type_id, &lid);
	const char *ln = btf__name_by_offset(local, lt->name_off);
	char *end;

	snprintf(o->desc, sizeof(o->desc), "%.*s", essential_len(ln), ln);
	tid = find_composite(target, ln, essential_len(ln));
	o->status = tid ? 1 : -1;
	o->bits = 0;
	strtoul(acc, &end, 10);		/* the index on the root pointer */
	while (*end == ':' && o->status == 1) {
		unsigned long idx = strtoul(end + 1, &end, 10);
		const struct btf_type *tt = btf__type_by_id(target, tid);

		if (btf_is_array(lt)) {		/* an element of an array field */
			const struct btf_array *a = btf_array(tt);

			o->bits += idx * btf__resolve_size(target, a->type) * 8;
			lt = skip_mods(local, btf_array(lt)->type, &lid);
			skip_mods(target, a->type, &tid);
			continue;
		}
		const struct btf_member *lm = btf_members(lt) + idx;
		const char *mn = btf__name_by_offset(local, lm->name_off);

		snprintf(o->desc + strlen(o->desc), sizeof(o->desc) - strlen(o->desc), ".%s", mn);
		if (!btf_is_composite(tt) || !find_member(target, tid, mn, &o->bits, &mtype)) {
			o->status = 0;
			break;
		}
		lt = skip_mods(local, lm->type, &lid);
		skip_mods(target, mtype, &tid);
	}
	/* the field read (not an offset taken: bpf_core_field_offset of a
	 * struct member) must be of a kind libbpf accepts */
	if (o->status == 1 && *end == 0 && strchr(acc, ':') && !fields_compat(local, lid, target, tid)) {
		snprintf(o->desc + strlen(o->desc), sizeof(o->desc) - strlen(o->desc),
			 " (of another kind)");
		o->status = 0;
	}
}

static void enum_relo(const struct btf *local, const struct core_relo *r, const char *acc,
		      const struct btf *target, struct relo_res *o)
{
	const struct btf_type *lt = skip_mods(local, r->type_id, NULL);
	const char *ln = btf__name_by_offset(local, lt->name_off);
	const char *vn = btf__name_by_offset(local, btf_enum(lt)[atoi(acc)].name_off);
	int n = btf__type_cnt(target);

	snprintf(o->desc, sizeof(o->desc), "enum %.*s::%.*s", essential_len(ln), ln,
		 essential_len(vn), vn);
	o->status = -1;
	o->bits = 0;
	for (int id = 1; id < n && o->status != 1; id++) {
		const struct btf_type *t = btf__type_by_id(target, id);
		const char *tn;

		if (!btf_is_enum(t) || !t->name_off)
			continue;
		tn = btf__name_by_offset(target, t->name_off);
		if ((int)strlen(tn) != essential_len(ln) || strncmp(tn, ln, strlen(tn)))
			continue;
		o->status = 0;
		for (int i = 0; i < btf_vlen(t); i++) {
			const char *en = btf__name_by_offset(target, btf_enum(t)[i].name_off);

			if ((int)strlen(en) == essential_len(vn) && !strncmp(en, vn, strlen(en))) {
				o->status = 1;
				o->bits = btf_enum(t)[i].val;
			}
		}
	}
}

/* the object's CO-RE relocations, as read from its .BTF.ext */
struct relos {
	struct btf *local;
	const struct core_relo *r[256];
	int n;
};

/* the .BTF.ext section of the object (libbpf 1.1 exports no accessor) */
static const char *btf_ext_section(const void *elf_bytes, size_t sz, size_t *len)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	elf_version(EV_CURRENT);
	e = elf_memory((char *)elf_bytes, sz);
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    strcmp(elf_strptr(e, shstrndx, sh.sh_name) ?: "", ".BTF.ext"))
			continue;
		d = elf_getdata(scn, NULL);
		*len = d ? d->d_size : 0;
		/* the data points into elf_bytes, which outlive e */
		return d ? d->d_buf : NULL;
	}
	return NULL;
}

static int read_relos(const char *obj_path, const void *elf, size_t sz, struct relos *out)
{
	const struct ext_hdr *h;
	const char *raw, *p, *end;
	size_t size;
	__u32 rec;

	out->local = btf__parse_elf(obj_path, NULL);
	raw = btf_ext_section(elf, sz, &size);
	if (!out->local || !raw || size < sizeof(*h))
		return -1;
	h = (const void *)raw;
	if (h->hdr_len < sizeof(*h) || !h->core_relo_len)
		return -1;
	p = raw + h->hdr_len + h->core_relo_off;
	end = p + h->core_relo_len;
	rec = *(const __u32 *)p;
	p += 4;
	/* per section: name offset, count, then count records of rec bytes */
	while (p + 8 <= end) {
		__u32 cnt = ((const __u32 *)p)[1];

		p += 8;
		for (__u32 i = 0; i < cnt && p + rec <= end; i++, p += rec)
			if (out->n < 256)
				out->r[out->n++] = (const void *)p;
	}
	return 0;
}

static void resolve(const struct relos *rl, int i, const struct btf *target, struct relo_res *o)
{
	const struct core_relo *r = rl->r[i];
	const char *acc = btf__name_by_offset(rl->local, r->access_str_off);

	if (r->kind == K_ENUMVAL_EXISTS || r->kind == K_ENUMVAL_VALUE)
		enum_relo(rl->local, r, acc, target, o);
	else
		field_relo(rl->local, r, acc, target, o);
}

/* the attach points: section names of the object's programs, "fentry/F" */
static int attach_points(const void *elf, size_t sz, const char **funcs, int max)
{
	struct bpf_object *obj = bpf_object__open_mem(elf, sz, NULL);
	struct bpf_program *p;
	int n = 0;

	if (!obj)
		return -1;
	bpf_object__for_each_program(p, obj) {
		const char *sec = bpf_program__section_name(p), *f = strchr(sec, '/');
		bool dup = false;

		for (int i = 0; f && i < n; i++)
			dup |= !strcmp(funcs[i], f + 1);
		if (f && !dup && n < max)
			funcs[n++] = strdup(f + 1);
	}
	bpf_object__close(obj);
	return n;
}

/* relocations that must resolve: an exists check is the BPF side's own
 * guard, a local type id needs no target */
static bool must_resolve(const struct core_relo *r)
{
	return r->kind != K_FIELD_EXISTS && r->kind != K_TYPE_ID_LOCAL &&
	       r->kind != K_TYPE_EXISTS && r->kind != K_ENUMVAL_EXISTS;
}

/* every read in ib_core; in each driver the kernel line ships, the same
 * offsets where the driver's BTF has the type */
static void check_reads(const char *kver, const char *dir, struct btf *base, struct btf *core,
			const struct relos *rl)
{
	static struct relo_res res[256];

	for (int i = 0; i < rl->n; i++) {
		bool dup = false;

		if (!must_resolve(rl->r[i]))
			continue;
		resolve(rl, i, core, &res[i]);
		for (int j = 0; j < i; j++)
			dup |= must_resolve(rl->r[j]) && !strcmp(res[j].desc, res[i].desc);
		if (!dup)
			tap_ok(res[i].status == 1, "%s: ib_core (on vmlinux) has %s", kver, res[i].desc);
	}
	for (unsigned int d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++) {
		char *path = module_path(dir, drivers[d]);
		struct btf *m = path ? btf__parse_split(path, base) : NULL;
		int same = 0, unused = 0, bad = 0;

		if (!path) {
			printf("# %s: ships no %s\n", kver, drivers[d]);
			continue;
		}
		for (int i = 0; m && i < rl->n; i++) {
			struct relo_res o;

			if (!must_resolve(rl->r[i]))
				continue;
			resolve(rl, i, m, &o);
			if (o.status < 0) {
				unused++;
			} else if (o.status == 1 && o.bits == res[i].bits) {
				same++;
			} else {
				bad++;
				printf("#   %s: %s %s\n", drivers[d], o.desc,
				       o.status ? "at another offset" : "missing");
			}
		}
		tap_ok(m && !bad && same, "%s: %s: %d reads at ib_core's offsets, %d in types "
		       "its BTF does not carry", kver, drivers[d], same, unused);
		btf__free(m);
		module_done(path);
	}
}

/* one kernel line: its attach points, then the relocations in ib_core,
 * then in each driver */
static void check_kernel(const char *cache, const char *kver, const char **funcs, int nfuncs,
			 const struct relos *rl)
{
	char dir[512], vml[600];
	struct btf *base, *core, *uverbs;
	char *core_p, *uv_p;

	snprintf(dir, sizeof(dir), "%s/%s", cache, kver);
	snprintf(vml, sizeof(vml), "%s/vmlinux", dir);
	core_p = module_path(dir, "ib_core");
	if (access(vml, R_OK) || !core_p) {
		tap_skip("no guest of this kernel in the cache (tests/vm/build-guest.sh)", "%s", kver);
		module_done(core_p);
		return;
	}
	base = btf__parse_elf(vml, NULL);
	core = base ? btf__parse_split(core_p, base) : NULL;
	if (!strncmp(kver, "5.10.", 5)) {
		/* a fact rdmaqp is built around: polling only there */
		tap_ok(base && !core, "%s: ib_core.ko has no BTF (module BTF is 5.11+): rdmaqp "
		       "runs on netlink alone there", kver);
		goto out;
	}
	tap_ok(core != NULL, "%s: ib_core's split BTF reads", kver);
	if (!core)
		goto out;
	uv_p = module_path(dir, "ib_uverbs");
	uverbs = uv_p ? btf__parse_split(uv_p, base) : NULL;
	for (int i = 0; i < nfuncs; i++) {
		bool in_uv = !strncmp(funcs[i], "ib_uverbs_", 10);
		struct btf *m = in_uv ? uverbs : core;
		int id = m ? btf__find_by_name_kind(m, funcs[i], BTF_KIND_FUNC) : -1;

		tap_ok(id >= (int)btf__type_cnt(base), "%s: attach point %s in %s", kver, funcs[i],
		       in_uv ? "ib_uverbs" : "ib_core");
		/* an fexit reads the return after the arguments it lists */
		if (id > 0 && !strcmp(funcs[i], "_ib_modify_qp"))
			tap_eq(btf_vlen(btf__type_by_id(m, btf__type_by_id(m, id)->type)), 4,
			       "%s: _ib_modify_qp takes the 4 arguments its fexit lists", kver);
	}
	check_reads(kver, dir, base, core, rl);
	btf__free(uverbs);
	module_done(uv_p);
out:
	btf__free(core);
	btf__free(base);
	module_done(core_p);
}

int main(void)
{
	const char *cache = getenv("AGENTXDP_VM_CACHE") ?: "/var/cache/agentxdp/vm";
	char tmp[] = "/tmp/rdmaqp_btf.XXXXXX";
	const char *funcs[32];
	struct relos rl = {};
	size_t sz;
	const void *elf = rdmaqp_bpf__elf_bytes(&sz);
	int fd = mkstemp(tmp), n;

	libbpf_set_print(NULL);
	if (fd < 0 || write(fd, elf, sz) != (ssize_t)sz) {
		tap_ok(0, "write the BPF object to %s", tmp);
		return tap_done();
	}
	close(fd);
	n = attach_points(elf, sz, funcs, 32);
	tap_ok(n >= 5, "rdmaqp.bpf.o: %d attach points", n);
	fd = read_relos(tmp, elf, sz, &rl);
	tap_ok(!fd && rl.n > 0, "rdmaqp.bpf.o: %d CO-RE relocations", rl.n);
	for (unsigned int k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		check_kernel(cache, kernels[k], funcs, n, &rl);
	unlink(tmp);
	return tap_done();
}
