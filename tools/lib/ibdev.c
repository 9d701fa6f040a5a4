// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An RDMA device's driver as sysfs names it (ibdev.h) */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ibdev.h"

/* the last part of the symbolic link SYS/class/infiniband/DEV/rel into
 * buf, "" when there is no such link */
static void link_base(const char *sys, const char *dev, const char *rel, char *buf,
		      size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;

	buf[0] = 0;
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/%s", sys ? sys : "/sys", dev, rel);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = 0;
	base = strrchr(link, '/');
	snprintf(buf, len, "%s", base ? base + 1 : link);
}

void ibdev_driver(const char *sys, const char *dev, char *buf, size_t len)
{
	link_base(sys, dev, "device/driver", buf, len);
}

bool ibdev_is_rxe(const char *sys, const char *dev)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/parent", sys ? sys : "/sys", dev);
	if (access(path, R_OK))
		return false;
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/device", sys ? sys : "/sys", dev);
	return access(path, F_OK) != 0;
}

void ibdev_module(const char *sys, const char *dev, char *buf, size_t len)
{
	char path[PATH_MAX];

	link_base(sys, dev, "device/driver/module", buf, len);
	if (buf[0] || !ibdev_is_rxe(sys, dev))
		return;
	snprintf(path, sizeof(path), "%s/module/rdma_rxe", sys ? sys : "/sys");
	if (!access(path, F_OK))
		snprintf(buf, len, "rdma_rxe");
}
