// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Enum value names from the running kernel's BTF or a module's
 * (btf_enum.h), and skb_drop_reason's names and values, the drop reasons
 * rxedrop, nfdrop and rocediag print.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "btf_enum.h"

struct btf_enum_entry {
	long long value;
	char *name;
};

struct btf_enum_names {
	struct btf_enum_entry *v;
	int n;
};

void btf_enum_free(struct btf_enum_names *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->n; i++)
		free(e->v[i].name);
	free(e->v);
	free(e);
}

struct btf *btf_vmlinux(void)
{
	static struct btf *btf;

	if (!btf)
		btf = btf__load_vmlinux_btf();
	return btf && !libbpf_get_error(btf) ? btf : NULL;
}

/* the loaded module's BTF (/sys/kernel/btf/<module>, split on vmlinux), the
 * last one asked for cached; NULL when the module is not loaded */
static struct btf *btf_module(const char *module)
{
	static struct btf *btf;
	static char loaded[64];
	char path[256];

	if (btf && !strcmp(loaded, module))
		return btf;
	if (!btf_vmlinux())
		return NULL;
	btf__free(btf);
	btf = NULL;
	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", module);
	btf = btf__parse_split(path, btf_vmlinux());
	if (libbpf_get_error(btf)) {
		btf = NULL;
		return NULL;
	}
	snprintf(loaded, sizeof(loaded), "%s", module);
	return btf;
}

static struct btf_enum_names *enum_load(struct btf *btf, const char *enum_name,
					const char *prefix);

/* all values of "enum <name>" in vmlinux BTF; strips prefix from names */
static struct btf_enum_names *btf_enum_load(const char *enum_name, const char *prefix)
{
	return enum_load(btf_vmlinux(), enum_name, prefix);
}

struct btf_enum_names *btf_enum_load_module(const char *module, const char *enum_name,
					    const char *prefix)
{
	struct btf *btf = btf_module(module);

	/* a split BTF finds vmlinux's types too */
	return enum_load(btf ? btf : btf_vmlinux(), enum_name, prefix);
}

static struct btf_enum_names *enum_load(struct btf *btf, const char *enum_name,
					const char *prefix)
{
	size_t plen = prefix ? strlen(prefix) : 0;
	const struct btf_type *t;
	struct btf_enum_names *e;
	int id, vlen;

	if (!btf)
		return NULL;
	id = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM);
	if (id < 0) {
#ifdef BTF_KIND_ENUM64
		id = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM64);
#endif
		if (id < 0)
			return NULL;
	}
	t = btf__type_by_id(btf, id);
	vlen = btf_vlen(t);
	e = calloc(1, sizeof(*e));
	if (!e || !(e->v = calloc(vlen ? vlen : 1, sizeof(*e->v)))) {
		free(e);
		return NULL;
	}
	for (int i = 0; i < vlen; i++) {
		const char *name;
		long long val;

		if (btf_is_enum(t)) {
			const struct btf_enum *m = btf_enum(t) + i;

			name = btf__name_by_offset(btf, m->name_off);
			val = btf_kflag(t) ? (long long)(int)m->val : (unsigned int)m->val;
		} else {
#ifdef BTF_KIND_ENUM64
			const struct btf_enum64 *m = btf_enum64(t) + i;

			name = btf__name_by_offset(btf, m->name_off);
			val = (long long)btf_enum64_value(m);
#else
			continue;
#endif
		}
		if (plen && !strncmp(name, prefix, plen))
			name += plen;
		e->v[e->n].value = val;
		e->v[e->n].name = strdup(name);
		e->n++;
	}
	return e;
}

const char *btf_enum_name(const struct btf_enum_names *e, long long value)
{
	for (int i = 0; e && i < e->n; i++)
		if (e->v[i].value == value)
			return e->v[i].name;
	return NULL;
}

/* value of a name (without prefix), false when unknown */
static bool btf_enum_value(const struct btf_enum_names *e, const char *name,
		    long long *value)
{
	for (int i = 0; e && i < e->n; i++)
		if (!strcmp(e->v[i].name, name)) {
			*value = e->v[i].value;
			return true;
		}
	return false;
}

#define DROP_SUBSYS_SHIFT 16

static struct btf_enum_names *reasons, *subsystems;

int drop_reasons_load(void)
{
	if (reasons)
		return 0;
	reasons = btf_enum_load("skb_drop_reason", "SKB_DROP_REASON_");
	if (!reasons)
		return -ENOENT;
	/* absent before 6.5: then no value has subsystem bits */
	subsystems = btf_enum_load("skb_drop_reason_subsys",
				   "SKB_DROP_REASON_SUBSYS_");
	return 0;
}

const char *drop_reason_name(unsigned int reason, char *buf, int len)
{
	const char *name = btf_enum_name(reasons, reason);
	unsigned int subsys = reason >> DROP_SUBSYS_SHIFT;

	/* a kernel without reasons (before 5.17): nothing was measured */
	if (!reasons) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (!name && reason == 0)
		name = "NOT_SPECIFIED";
	if (name)
		snprintf(buf, len, "%s", name);
	else if (subsys && (name = btf_enum_name(subsystems, subsys)))
		snprintf(buf, len, "%s:%u", name,
			 reason & ((1U << DROP_SUBSYS_SHIFT) - 1));
	else
		snprintf(buf, len, "REASON_%u", reason);
	return buf;
}

long long drop_reason_value(const char *name)
{
	long long v;

	return btf_enum_value(reasons, name, &v) ? v : -1;
}
