// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rdmaqp's port counters from sysfs (rdmaqp_port.h) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rdmaqp_port.h"

static struct rdmaqp_counter *counter_of(struct rdmaqp_port *p, const char *name, bool hw)
{
	struct rdmaqp_counter *c;

	for (int i = 0; i < p->n; i++)
		if (p->cnt[i].hw == hw && !strcmp(p->cnt[i].name, name))
			return &p->cnt[i];
	c = realloc(p->cnt, (p->n + 1) * sizeof(*c));
	if (!c)
		return NULL;
	p->cnt = c;
	c = &p->cnt[p->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%.*s", (int)sizeof(c->name) - 1, name);
	c->hw = hw;
	return c;
}

/* one counter file: a decimal number; some (PMA counters the device
 * lacks) fail to read, and are skipped */
static bool read_u64(int dirfd, const char *name, __u64 *v)
{
	char buf[32];
	int fd = openat(dirfd, name, O_RDONLY);
	ssize_t n;
	char *end;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	*v = strtoull(buf, &end, 10);
	return end != buf;
}

static int read_dir(struct rdmaqp_port *p, const char *path, bool hw)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct rdmaqp_counter *c;
		__u64 v;

		/* hw_counters/lifespan is a setting, not a counter */
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
			continue;
		if (!read_u64(dirfd(d), de->d_name, &v))
			continue;
		c = counter_of(p, de->d_name, hw);
		if (!c)
			break;
		c->prev = c->value;
		c->has_prev = c->ever;
		c->ever = true;
		c->value = v;
		c->valid = true;
	}
	closedir(d);
	return 0;
}

/* the netdev of the port's GID 0 (gid_attrs/ndevs/0), and its pauses */
static void read_netdev(struct rdmaqp_port *p, const char *sysfs)
{
	char path[512], name[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/gid_attrs/ndevs/0", sysfs,
		 p->dev, p->port);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
	}
	name[strcspn(name, "\n")] = 0;
	snprintf(p->netdev, sizeof(p->netdev), "%.15s", name);
	if (p->netdev[0]) {
		rdmaqp_pfc_read(&p->pfc, p->netdev);
		return;
	}
	memset(&p->pfc, 0, sizeof(p->pfc));
	snprintf(p->pfc.why, sizeof(p->pfc.why), "%s port %u: no netdev (no GID), no pause "
		 "counters", p->dev, p->port);
}

static void find_family(struct rdmaqp_port *p, const char *sysfs)
{
	const char **names = calloc(p->n + 1, sizeof(*names));
	size_t n = 0;

	if (!names)
		return;
	for (int i = 0; i < p->n; i++)
		if (p->cnt[i].hw)
			names[n++] = p->cnt[i].name;
	p->family = rdmaqp_family_of(sysfs, p->dev, names, n);
	p->family_known = true;
	free(names);
}

int rdmaqp_port_read(struct rdmaqp_port *p, const char *sysfs)
{
	char path[512];
	int e1, e2;

	for (int i = 0; i < p->n; i++)
		p->cnt[i].valid = false;
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/counters", sysfs, p->dev,
		 p->port);
	e1 = read_dir(p, path, false);
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/hw_counters", sysfs,
		 p->dev, p->port);
	e2 = read_dir(p, path, true);
	if (!p->family_known)
		find_family(p, sysfs);
	read_netdev(p, sysfs);
	return e1 && e2 ? e2 : 0;
}

void rdmaqp_port_free(struct rdmaqp_port *p)
{
	free(p->cnt);
	p->cnt = NULL;
	p->n = 0;
}
