// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rxeqp's advice when it cannot trace, from what the host has: its RDMA
 * devices (/sys/class/infiniband), whose driver is named by their bus
 * device (a PCI RNIC's mlx5_core, irdma, bnxt_en...; rdma_rxe's devices
 * have no bus device but a "parent" netdev attribute), and whether the
 * kernel can load rdma_rxe at all (modules.dep, modules.builtin).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "rxeqp_host.h"
#include "lib/ibdev.h"


/* whether the kernel's module lists name rdma_rxe */
static bool rxe_module_known(void)
{
	static const char *const lists[] = { "modules.dep", "modules.builtin" };
	struct utsname u;
	char path[PATH_MAX], line[1024];
	bool found = false;

	if (uname(&u))
		return false;
	for (unsigned int i = 0; i < 2 && !found; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/lib/modules/%s/%s", u.release, lists[i]);
		f = fopen(path, "r");
		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, "/rdma_rxe.ko") != NULL;
		if (f)
			fclose(f);
	}
	return found;
}

void rxeqp_host_probe(struct rxeqp_host *h)
{
	DIR *d = opendir(IBDEV_CLASS);
	struct dirent *e;

	memset(h, 0, sizeof(*h));
	h->rxe_loaded = access("/sys/module/rdma_rxe", F_OK) == 0;
	h->rxe_btf = access("/sys/kernel/btf/rdma_rxe", R_OK) == 0;
	h->rxe_module = h->rxe_loaded || rxe_module_known();
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		h->ndevs++;
		if (ibdev_is_rxe(NULL, e->d_name))
			continue;
		if (!h->nother++) {
			snprintf(h->other_dev, sizeof(h->other_dev), "%.63s", e->d_name);
			ibdev_driver(NULL, e->d_name, h->other_driver, sizeof(h->other_driver));
		}
	}
	if (d)
		closedir(d);
}

const char *rxeqp_host_advice(const struct rxeqp_host *h, char *buf, size_t len)
{
	char more[32] = "";

	if (h->rxe_loaded && !h->rxe_btf) {
		snprintf(buf, len, "rdma_rxe is loaded, but this kernel has no module BTF "
			 "(/sys/kernel/btf/rdma_rxe, 5.11+), which rxeqp needs to read its "
			 "queue pairs: it cannot run here");
		return buf;
	}
	if (h->nother > 1)
		snprintf(more, sizeof(more), ", and %d more", h->nother - 1);
	if (h->nother && h->other_driver[0])
		snprintf(buf, len, "rdma_rxe is not loaded, and this host's RDMA device %s "
			 "(driver %s%s) is a hardware RNIC: its QPs live in the NIC, where "
			 "rxeqp cannot see (rdma res show qp lists them; rocelat --mirror on a "
			 "mirror port times their RoCE)", h->other_dev, h->other_driver, more);
	else if (h->nother)
		snprintf(buf, len, "rdma_rxe is not loaded, and this host's RDMA device %s%s "
			 "is not Soft-RoCE: rxeqp traces rdma_rxe's QPs only",
			 h->other_dev, more);
	else if (h->rxe_module)
		snprintf(buf, len, "rdma_rxe is not loaded (no /sys/kernel/btf/rdma_rxe) and "
			 "this host has no RDMA device: for Soft-RoCE, modprobe rdma_rxe and "
			 "add a device (rdma link add rxe0 type rxe netdev IFACE)");
	else
		snprintf(buf, len, "rdma_rxe is not loaded, this kernel has no rdma_rxe "
			 "module, and this host no RDMA device: nothing for rxeqp to trace "
			 "here");
	return buf;
}
