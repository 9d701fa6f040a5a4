// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BPF sides of the tools on the RDMA stack (rdmaqp on ib_core and
 * ib_uverbs, verbslat on the drivers' post and poll entry points) against
 * the real RDMA modules of Debian's kernel packages: every function an
 * object attaches to (its programs' section names) must have BTF in the
 * module that defines it (by its prefix: rxe_ in rdma_rxe, mlx5_ib_ in
 * mlx5_ib, irdma_, bnxt_re_, ib_uverbs_, else ib_core), with the
 * arguments its programs read; and every CO-RE relocation it carries
 * (its .BTF.ext: each field read, each type size, each enum value) must
 * resolve in ib_core's BTF and, with the same offset (or size), in every
 * hardware driver's that has the type (mlx5_ib, irdma, bnxt_re: what
 * libbpf matches against on such a host). Nothing is listed by hand: a
 * read or a hook added to either object is checked by the next run.
 *
 * The modules are the ones the Soft-RoCE guests use, extracted from
 * Debian's packages by tests/vm/build-guest.sh into
 * /var/cache/agentxdp/vm/<kver>/ (AGENTXDP_VM_CACHE), with the kernel's
 * vmlinux, the base of their split BTF (read with libbpf's
 * btf__parse_split, as btf/gen-rdma-rxe.sh does through btf/btfmin.c;
 * Debian 12's bpftool cannot). 6.12's modules are .ko.xz, unpacked with
 * xz first. 5.10's modules carry no BTF (CONFIG_DEBUG_INFO_BTF_MODULES came
 * in 5.11): that is checked as a fact (rdmaqp then runs on netlink alone,
 * verbslat refuses), and the attach points as the modules' symbols, what
 * a kprobe there would need.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <libelf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "rdmaqp.skel.h"
#include "verbslat.skel.h"
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

enum { K_FIELD_EXISTS = 2, K_TYPE_ID_LOCAL = 6, K_TYPE_SIZE = 9, K_TYPE_EXISTS = 8, K_ENUMVAL_EXISTS = 10,
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
	if (asprintf(&path, "/tmp/rdma_btf.%d.%d.ko", getpid(), ntmp++) < 0)
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
	if (path && !strncmp(path, "/tmp/rdma_btf.", 14))
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

		if (!mn || !*mn) {
			/* an anonymous union or struct (wr_id's in ib_wc):
			 * the target's is looked through by find_member() */
			lt = skip_mods(local, lm->type, &lid);
			continue;
		}
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

	if (r->kind == K_ENUMVAL_EXISTS || r->kind == K_ENUMVAL_VALUE) {
		enum_relo(rl->local, r, acc, target, o);
		return;
	}
	field_relo(rl->local, r, acc, target, o);
	if (r->kind == K_TYPE_SIZE && o->status == 1) {
		/* the size of the type (an array of it is walked with it) */
		const char *ln = o->desc;
		__u32 tid = find_composite(target, ln, strlen(ln));

		o->bits = btf__resolve_size(target, tid) * 8;
		snprintf(o->desc + strlen(o->desc), sizeof(o->desc) - strlen(o->desc), " (size)");
	}
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


/* one BPF object under test */
struct object {
	const char *name;
	const void *(*elf)(size_t *sz);
	const char *funcs[64];
	int nfuncs;
	struct relos rl;
};

/* the module defining an attach point, by its name */
static const char *module_of(const char *func)
{
	static const char *const prefix[][2] = {
		{ "ib_uverbs_", "ib_uverbs" }, { "rxe_", "rdma_rxe" }, { "mlx5_ib_", "mlx5_ib" },
		{ "irdma_", "irdma" }, { "bnxt_re_", "bnxt_re" },
	};

	for (unsigned int i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(func, prefix[i][0], strlen(prefix[i][0])))
			return prefix[i][1];
	return "ib_core";
}

/* the arguments a hook's programs list (an fexit lists them all before the
 * return value), by the function's name or its suffix; -1: not checked */
static int nargs_of(const char *func)
{
	static const struct { const char *end; int n; } args[] = {
		{ "_ib_modify_qp", 4 },		/* qp, attr, mask, udata */
		{ "_poll_cq", 3 },		/* cq, num_entries, wc */
		{ "_post_send", 3 }, { "_post_recv", 3 },	/* qp, wr, bad_wr */
		{ "_post_send_nodrain", 3 }, { "_post_recv_nodrain", 3 },
	};
	size_t fl = strlen(func);

	for (unsigned int i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		size_t el = strlen(args[i].end);

		if (fl >= el && !strcmp(func + fl - el, args[i].end))
			return args[i].n;
	}
	return -1;
}

/* every read in ib_core; in each driver the kernel line ships, the same
 * offsets (sizes) where the driver's BTF has the type */
static void check_reads(const char *kver, const char *dir, struct btf *base, struct btf *core,
			const struct object *ob)
{
	static struct relo_res res[256];
	const struct relos *rl = &ob->rl;

	for (int i = 0; i < rl->n; i++) {
		bool dup = false;

		if (!must_resolve(rl->r[i]))
			continue;
		resolve(rl, i, core, &res[i]);
		for (int j = 0; j < i; j++)
			dup |= must_resolve(rl->r[j]) && !strcmp(res[j].desc, res[i].desc);
		if (!dup)
			tap_ok(res[i].status == 1, "%s: %s: ib_core (on vmlinux) has %s", kver,
			       ob->name, res[i].desc);
	}
	for (unsigned int d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++) {
		char *path = module_path(dir, drivers[d]);
		struct btf *m = path ? btf__parse_split(path, base) : NULL;
		int same = 0, unused = 0, bad = 0;

		if (!path)
			continue;	/* said once, by check_attach() */
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
		tap_ok(m && !bad && same, "%s: %s: %s: %d reads at ib_core's offsets, %d in types "
		       "its BTF does not carry", kver, ob->name, drivers[d], same, unused);
		btf__free(m);
		module_done(path);
	}
}

/* a symbol of the module's ELF symbol table (what kallsyms lists once it is
 * loaded: what a kprobe attaches to) */
static bool elf_has_symbol(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	bool found = false;

	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && !found && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(d, i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
				found = !strcmp(elf_strptr(e, sh.sh_link, sym.st_name) ?: "", name);
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return found;
}

/* each attach point in its module: with BTF (base set) and the arguments
 * its programs read, else (5.10) as a symbol */
static void check_attach(const char *kver, const char *dir, struct btf *base,
			 const struct object *ob)
{
	for (int i = 0; i < ob->nfuncs; i++) {
		const char *f = ob->funcs[i], *mod = module_of(f);
		char *path = module_path(dir, mod);
		struct btf *m = path && base ? btf__parse_split(path, base) : NULL;
		int id = m ? btf__find_by_name_kind(m, f, BTF_KIND_FUNC) : -1, want = nargs_of(f);

		if (!path) {
			printf("# %s: ships no %s (%s)\n", kver, mod, f);
		} else if (!base) {
			tap_ok(elf_has_symbol(path, f), "%s: %s: %s in %s's symbols (kprobes; no "
			       "module BTF)", kver, ob->name, f, mod);
		} else {
			tap_ok(id >= (int)btf__type_cnt(base), "%s: %s: attach point %s in %s",
			       kver, ob->name, f, mod);
			if (id > 0 && want >= 0)
				tap_eq(btf_vlen(btf__type_by_id(m, btf__type_by_id(m, id)->type)),
				       want, "%s: %s takes the %d arguments its programs list",
				       kver, f, want);
		}
		btf__free(m);
		module_done(path);
	}
}

/* one kernel line: each object's attach points, then its relocations in
 * ib_core, then in each driver */
static void check_kernel(const char *cache, const char *kver, struct object *obs, int nobs)
{
	char dir[512], vml[600];
	struct btf *base, *core;
	char *core_p;

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
		/* a fact rdmaqp and verbslat are built around */
		tap_ok(base && !core, "%s: ib_core.ko has no BTF (module BTF is 5.11+): rdmaqp "
		       "runs on netlink alone there, verbslat refuses", kver);
		for (int o = 0; o < nobs; o++)
			check_attach(kver, dir, NULL, &obs[o]);
		goto out;
	}
	tap_ok(core != NULL, "%s: ib_core's split BTF reads", kver);
	for (unsigned int d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++) {
		char *p = module_path(dir, drivers[d]);

		if (!p)
			printf("# %s: ships no %s\n", kver, drivers[d]);
		module_done(p);
	}
	for (int o = 0; core && o < nobs; o++) {
		check_attach(kver, dir, base, &obs[o]);
		check_reads(kver, dir, base, core, &obs[o]);
	}
out:
	btf__free(core);
	btf__free(base);
	module_done(core_p);
}

/* the object's attach points and relocations; 0 when both read */
static int object_read(struct object *ob)
{
	char tmp[] = "/tmp/rdma_btf.XXXXXX";
	size_t sz;
	const void *elf = ob->elf(&sz);
	int fd = mkstemp(tmp), err;

	if (fd < 0 || write(fd, elf, sz) != (ssize_t)sz) {
		tap_ok(0, "write the BPF object to %s", tmp);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	ob->nfuncs = attach_points(elf, sz, ob->funcs, 64);
	tap_ok(ob->nfuncs >= 5, "%s: %d attach points", ob->name, ob->nfuncs);
	err = read_relos(tmp, elf, sz, &ob->rl);
	tap_ok(!err && ob->rl.n > 0, "%s: %d CO-RE relocations", ob->name, ob->rl.n);
	unlink(tmp);
	return ob->nfuncs < 5 || err;
}

int main(void)
{
	const char *cache = getenv("AGENTXDP_VM_CACHE") ?: "/var/cache/agentxdp/vm";
	struct object obs[] = {
		{ .name = "rdmaqp.bpf.o", .elf = rdmaqp_bpf__elf_bytes },
		{ .name = "verbslat.bpf.o", .elf = verbslat_bpf__elf_bytes },
	};
	int nobs = sizeof(obs) / sizeof(obs[0]);

	libbpf_set_print(NULL);
	elf_version(EV_CURRENT);
	for (int o = 0; o < nobs; o++)
		if (object_read(&obs[o]))
			return tap_done();
	for (unsigned int k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		check_kernel(cache, kernels[k], obs, nobs);
	return tap_done();
}
