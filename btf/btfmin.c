// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * btfmin: minimal CO-RE type definitions for a kernel module, generated from
 * the module's own (split) BTF.
 *
 *   btfmin BASE_BTF MODULE_BTF SPEC VMLINUX_H > header.h
 *
 * BASE_BTF is vmlinux (an ELF with .BTF, or /sys/kernel/btf/vmlinux), MODULE_BTF
 * the module (.ko, or /sys/kernel/btf/<module>) whose BTF is split on top of
 * it, VMLINUX_H the vendored vmlinux.h the BPF code compiles against (its
 * types are referenced by name, never redefined). SPEC lists, one per line,
 * what the BPF code reads:
 *
 *   struct NAME field field ...     only these members, at their BTF types
 *   enum NAME                       every enumerator, values from BTF
 *
 * Why not `bpftool btf dump ... format c`: that dumps vmlinux's types too,
 * which clash with the vendored vmlinux.h, and thousands of module types
 * nobody reads. The output here is small enough to review, and every struct
 * carries preserve_access_index, so offsets are relocated against the
 * running kernel's BTF at load time (CO-RE): the header only has to name
 * fields and types correctly, not match any one kernel's layout.
 *
 * Rules: types vmlinux.h defines are referenced by name; other structs used
 * by value must be in SPEC, and so must those named by a pointer (a pointer
 * to anything else becomes void *). Debian's 6.1 vmlinux carries ib_core
 * types (ib_qp, ib_device, ...) that the vendored vmlinux.h, made from a
 * kernel without them, lacks: what counts is vmlinux.h, not the base BTF.
 * Every definition is wrapped in #ifndef AX_HAVE_<kind>_<name>: the Makefile
 * defines those for the types the vmlinux.h of the target architecture has
 * (Debian's arm64 vmlinux.h has ib_core's), so the header serves both.
 * Typedefs of integers become
 * __u8..__s64 / bool; enums not in SPEC become integers of their size;
 * anonymous struct/union members are kept when they contain a wanted field,
 * anonymous types of named members are written out in full.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define MAX_ITEMS 64
#define MAX_FIELDS 32
#define TABS "\t\t\t\t\t\t\t\t"

struct item {
	bool is_enum;
	char name[64];
	int nfields;
	char fields[MAX_FIELDS][64];
	int id;
	int done;	/* 0 not yet, 1 in progress, 2 written */
};

static struct btf *btf;
static struct item items[MAX_ITEMS];
static int nitems;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "btfmin: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static const char *tname(const struct btf_type *t)
{
	return btf__name_by_offset(btf, t->name_off);
}

static struct item *find_item(const char *name, bool is_enum)
{
	for (int i = 0; i < nitems; i++)
		if (items[i].is_enum == is_enum && !strcmp(items[i].name, name))
			return &items[i];
	return NULL;
}

/* names vmlinux.h defines: "struct X {", "union X {", "enum X {", "typedef ... X;" */
#define MAX_KNOWN 200000
static char **known;
static int nknown;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void read_vmlinux_h(const char *path)
{
	char line[4096], name[256];
	FILE *f = fopen(path, "r");

	if (!f)
		die("%s: %s", path, strerror(errno));
	known = calloc(MAX_KNOWN, sizeof(*known));
	while (known && fgets(line, sizeof(line), f) && nknown < MAX_KNOWN) {
		char kw[16], *semi;

		name[0] = 0;
		if (sscanf(line, "%15s %255[A-Za-z0-9_] {", kw, name) == 2 &&
		    (!strcmp(kw, "struct") || !strcmp(kw, "union") || !strcmp(kw, "enum")) &&
		    strchr(line, '{')) {
			/* kind-qualified, so "struct foo" and "typedef foo" differ */
		} else if (!strncmp(line, "typedef ", 8) && (semi = strrchr(line, ';'))) {
			char *e = semi, *b;

			while (e > line && (e[-1] == ')' || e[-1] == ']' || e[-1] == ' '))
				e = e[-1] == ']' ? strrchr(line, '[') : e - 1;
			b = e;
			while (b > line && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') ||
			       (b[-1] >= 'A' && b[-1] <= 'Z') || (b[-1] >= '0' && b[-1] <= '9')))
				b--;
			if (e - b <= 0 || e - b >= (int)sizeof(name) - 9 || strchr(line, '('))
				continue;	/* function pointer typedefs: never needed */
			snprintf(kw, sizeof(kw), "typedef");
			snprintf(name, sizeof(name), "%.*s", (int)(e - b), b);
		} else {
			continue;
		}
		if (asprintf(&known[nknown], "%s %s", kw, name) > 0)
			nknown++;
	}
	fclose(f);
	if (!known || !nknown)
		die("%s: no type definitions found", path);
	qsort(known, nknown, sizeof(*known), cmp_str);
}

/* vmlinux.h defines the named type id under the same kind */
static bool in_vmlinux_h(int id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const char *kw, *n = tname(t);
	char key[300], *k = key;

	if (!t->name_off)
		return false;
	if (btf_is_struct(t))
		kw = "struct";
	else if (btf_is_union(t))
		kw = "union";
	else if (btf_is_enum(t) || btf_is_enum64(t))
		kw = "enum";
	else if (btf_is_typedef(t))
		kw = "typedef";
	else
		return false;
	snprintf(key, sizeof(key), "%s %s", kw, n);
	return bsearch(&k, known, nknown, sizeof(*known), cmp_str) != NULL;
}

static int skip_mods(int id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_mod(t) || btf_is_type_tag(t))) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	return id;
}

static int skip_typedefs(int id)
{
	const struct btf_type *t;

	id = skip_mods(id);
	t = btf__type_by_id(btf, id);
	while (t && btf_is_typedef(t)) {
		id = skip_mods(t->type);
		t = btf__type_by_id(btf, id);
	}
	return id;
}

/* integer spelled by size and signedness, the way vmlinux.h types it */
static const char *int_name(const struct btf_type *t)
{
	static const char *u[] = { "__u8", "__u16", "__u32", "__u64" };
	static const char *s[] = { "__s8", "__s16", "__s32", "__s64" };
	int idx;

	if (btf_is_int(t)) {
		__u32 enc = btf_int_encoding(t);

		if (enc & BTF_INT_BOOL)
			return "bool";
		if ((enc & BTF_INT_CHAR) || !strcmp(tname(t), "char"))
			return "char";
	}
	switch (t->size) {
	case 1: idx = 0; break;
	case 2: idx = 1; break;
	case 4: idx = 2; break;
	case 8: idx = 3; break;
	default: die("integer type '%s' of size %u", tname(t), t->size);
	}
	if (btf_is_int(t))
		return (btf_int_encoding(t) & BTF_INT_SIGNED) ? s[idx] : u[idx];
	return btf_kflag(t) ? s[idx] : u[idx];	/* enum: kflag means signed */
}

static void emit_composite(FILE *f, int id, struct item *it, int depth);

static void add_enum(int id)
{
	struct item *it;

	if (nitems == MAX_ITEMS)
		die("too many types");
	it = &items[nitems++];
	memset(it, 0, sizeof(*it));
	it->is_enum = true;
	it->id = id;
	snprintf(it->name, sizeof(it->name), "%s", tname(btf__type_by_id(btf, id)));
}

/* "TYPE NAME" (with array suffixes); anonymous composites written inline */
static void emit_decl(FILE *f, int id, const char *name, int depth)
{
	char suffix[64] = "";
	const struct btf_type *t;

	id = skip_mods(id);
	t = btf__type_by_id(btf, id);
	while (btf_is_array(t)) {
		const struct btf_array *a = btf_array(t);
		char s[24];

		snprintf(s, sizeof(s), "[%u]", a->nelems);
		strncat(suffix, s, sizeof(suffix) - strlen(suffix) - 1);
		id = skip_mods(a->type);
		t = btf__type_by_id(btf, id);
	}
	/* typedefs: of integers to fixed-width names, others only from vmlinux */
	while (btf_is_typedef(t)) {
		int under = skip_mods(t->type);
		const struct btf_type *u = btf__type_by_id(btf, under);
		const struct btf_type *r = btf__type_by_id(btf, skip_typedefs(under));

		if (btf_is_int(r)) {
			fprintf(f, "%s %s%s", int_name(r), name, suffix);
			return;
		}
		if (in_vmlinux_h(id)) {
			fprintf(f, "%s %s%s", tname(t), name, suffix);
			return;
		}
		id = under;
		t = u;
	}
	if (btf_is_int(t)) {
		fprintf(f, "%s %s%s", int_name(t), name, suffix);
	} else if (btf_is_enum(t) || btf_is_enum64(t)) {
		/* CO-RE wants an enum where the kernel has one (libbpf does not
		 * match an int member against an enum member): enums the spec does
		 * not list come along by themselves */
		if (t->name_off && !in_vmlinux_h(id) && !find_item(tname(t), true))
			add_enum(id);
		if (t->name_off)
			fprintf(f, "enum %s %s%s", tname(t), name, suffix);
		else
			fprintf(f, "%s %s%s", int_name(t), name, suffix);
	} else if (btf_is_ptr(t)) {
		int pid = skip_mods(t->type);
		const struct btf_type *p = btf__type_by_id(btf, pid);

		if (btf_is_typedef(p) && btf_is_int(btf__type_by_id(btf, skip_typedefs(pid)))) {
			pid = skip_typedefs(pid);
			p = btf__type_by_id(btf, pid);
		}
		while (btf_is_typedef(p) && !in_vmlinux_h(pid)) {
			pid = skip_mods(p->type);
			p = btf__type_by_id(btf, pid);
		}
		if (pid && btf_is_composite(p) && p->name_off &&
		    (in_vmlinux_h(pid) || find_item(tname(p), false)))
			fprintf(f, "%s %s *%s%s", btf_is_struct(p) ? "struct" : "union",
				tname(p), name, suffix);
		else if (pid && btf_is_int(p))
			fprintf(f, "%s *%s%s", int_name(p), name, suffix);
		else
			fprintf(f, "void *%s%s", name, suffix);
	} else if (btf_is_composite(t)) {
		const char *kw = btf_is_struct(t) ? "struct" : "union";

		if (!t->name_off) {
			fprintf(f, "%s {\n", kw);
			emit_composite(f, id, NULL, depth + 1);
			fprintf(f, "%.*s} %s%s", depth, TABS, name, suffix);
		} else if (in_vmlinux_h(id) || find_item(tname(t), false)) {
			fprintf(f, "%s %s %s%s", kw, tname(t), name, suffix);
		} else {
			die("member '%s' is %s %s by value, which vmlinux.h lacks: add it to the spec",
			    name, kw, tname(t));
		}
	} else {
		die("member '%s': unsupported BTF kind %u", name, btf_kind(t));
	}
}

static bool wanted(struct item *it, const char *name)
{
	if (!it)
		return true;	/* anonymous type of a named member: everything */
	for (int i = 0; i < it->nfields; i++)
		if (!strcmp(it->fields[i], name))
			return true;
	return false;
}

/* does the anonymous member id contain a wanted field (at any depth)? */
static bool anon_has_wanted(int id, struct item *it)
{
	const struct btf_type *t = btf__type_by_id(btf, skip_mods(id));
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (*n ? wanted(it, n) : anon_has_wanted(m->type, it))
			return true;
	}
	return false;
}

/* members of composite id; it == NULL writes all of them */
static void emit_composite(FILE *f, int id, struct item *it, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (btf_member_bitfield_size(t, i))
			continue;	/* never read: CO-RE bitfields need special reads */
		if (!*n) {
			const struct btf_type *a = btf__type_by_id(btf, skip_mods(m->type));

			if (!it || anon_has_wanted(m->type, it)) {
				fprintf(f, "%.*s%s {\n", depth, TABS,
					btf_is_struct(a) ? "struct" : "union");
				emit_composite(f, skip_mods(m->type), it, depth + 1);
				fprintf(f, "%.*s};\n", depth, TABS);
			}
			continue;
		}
		if (!wanted(it, n))
			continue;
		fprintf(f, "%.*s", depth, TABS);
		emit_decl(f, m->type, n, depth);
		fprintf(f, ";\n");
	}
}

/* check every spec field exists (directly or inside anonymous members) */
static bool has_member(int id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, skip_mods(id));
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (*n ? !strcmp(n, name) : has_member(m->type, name))
			return true;
	}
	return false;
}

static void emit_item(FILE *f, struct item *it);

/* module structs this one embeds by value must come first */
static void emit_deps(FILE *f, int id)
{
	const struct btf_type *t = btf__type_by_id(btf, skip_mods(id));
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		int mid = skip_mods(m->type);
		const struct btf_type *mt = btf__type_by_id(btf, mid);
		struct item *dep;

		while (btf_is_array(mt)) {
			mid = skip_mods(btf_array(mt)->type);
			mt = btf__type_by_id(btf, mid);
		}
		if (!btf_is_composite(mt))
			continue;
		if (!mt->name_off) {
			emit_deps(f, mid);
			continue;
		}
		dep = find_item(tname(mt), false);
		if (dep && !in_vmlinux_h(mid))
			emit_item(f, dep);
	}
}

static void emit_item(FILE *f, struct item *it)
{
	const struct btf_type *t = btf__type_by_id(btf, it->id);

	if (it->done == 2)
		return;
	if (it->done == 1)
		die("struct %s embeds itself", it->name);
	it->done = 1;
	if (it->is_enum) {
		fprintf(f, "#ifndef AX_HAVE_enum_%s\n", it->name);
		fprintf(f, "enum %s {\n", it->name);
		for (int i = 0; i < btf_vlen(t); i++) {
			const char *n;
			long long v;

			if (btf_is_enum64(t)) {
				n = btf__name_by_offset(btf, btf_enum64(t)[i].name_off);
				v = (long long)btf_enum64_value(btf_enum64(t) + i);
			} else {
				n = btf__name_by_offset(btf, btf_enum(t)[i].name_off);
				v = btf_kflag(t) ? (long long)(int)btf_enum(t)[i].val :
						   (long long)btf_enum(t)[i].val;
			}
			fprintf(f, "\t%s = %lld,\n", n, v);
		}
		fprintf(f, "};\n#endif\n\n");
		it->done = 2;
		return;
	}
	emit_deps(f, it->id);
	fprintf(f, "#ifndef AX_HAVE_%s_%s\n", btf_is_struct(t) ? "struct" : "union", it->name);
	fprintf(f, "%s %s {\n", btf_is_struct(t) ? "struct" : "union", it->name);
	emit_composite(f, it->id, it, 1);
	fprintf(f, "} __attribute__((preserve_access_index));\n#endif\n\n");
	it->done = 2;
}

static void read_spec(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int lineno = 0;

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *tok, *save = NULL;
		struct item *it;

		lineno++;
		tok = strtok_r(line, " \t\n", &save);
		if (!tok || *tok == '#')
			continue;
		if (nitems == MAX_ITEMS)
			die("%s: too many entries", path);
		it = &items[nitems++];
		if (!strcmp(tok, "enum"))
			it->is_enum = true;
		else if (strcmp(tok, "struct"))
			die("%s:%d: expected 'struct' or 'enum'", path, lineno);
		tok = strtok_r(NULL, " \t\n", &save);
		if (!tok)
			die("%s:%d: missing name", path, lineno);
		snprintf(it->name, sizeof(it->name), "%s", tok);
		while ((tok = strtok_r(NULL, " \t\n", &save))) {
			if (*tok == '#')
				break;
			if (it->is_enum)
				die("%s:%d: enums take no fields", path, lineno);
			if (it->nfields == MAX_FIELDS)
				die("%s:%d: too many fields", path, lineno);
			snprintf(it->fields[it->nfields++], 64, "%s", tok);
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	struct btf *base;
	FILE *out = stdout;

	if (argc != 5) {
		fprintf(stderr, "usage: btfmin BASE_BTF MODULE_BTF SPEC VMLINUX_H > header.h\n");
		return 2;
	}
	base = btf__parse(argv[1], NULL);
	if (!base)
		die("%s: cannot read BTF: %s", argv[1], strerror(errno));
	btf = btf__parse_split(argv[2], base);
	if (!btf)
		die("%s: cannot read split BTF on top of %s: %s", argv[2], argv[1],
		    strerror(errno));
	read_spec(argv[3]);
	read_vmlinux_h(argv[4]);

	for (int i = 0; i < nitems; i++) {
		struct item *it = &items[i];
		int id = btf__find_by_name_kind(btf, it->name,
						it->is_enum ? BTF_KIND_ENUM : BTF_KIND_STRUCT);

		if (id < 0 && !it->is_enum)
			id = btf__find_by_name_kind(btf, it->name, BTF_KIND_UNION);
		if (id < 0)
			die("%s %s: not in the BTF", it->is_enum ? "enum" : "struct", it->name);
		if (in_vmlinux_h(id))
			die("%s %s: vmlinux.h has it already, drop it from the spec",
			    it->is_enum ? "enum" : "struct", it->name);
		it->id = id;
		for (int j = 0; j < it->nfields; j++)
			if (!has_member(id, it->fields[j]))
				die("struct %s has no member '%s'", it->name, it->fields[j]);
	}

	/* structs first into memory: they may pull in enums, written before */
	char *body = NULL;
	size_t body_len = 0;
	FILE *mem = open_memstream(&body, &body_len);
	int nspec = nitems;

	if (!mem)
		die("open_memstream: %s", strerror(errno));
	for (int i = 0; i < nspec; i++)
		if (!items[i].is_enum)
			emit_item(mem, &items[i]);
	fclose(mem);
	for (int i = 0; i < nspec; i++)
		if (!items[i].is_enum)
			fprintf(out, "struct %s;\n", items[i].name);
	fprintf(out, "\n");
	for (int i = 0; i < nitems; i++)
		if (items[i].is_enum)
			emit_item(out, &items[i]);
	fputs(body, out);
	free(body);
	btf__free(btf);
	btf__free(base);
	return 0;
}
