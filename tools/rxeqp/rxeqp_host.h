/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What this host has for RDMA, read from sysfs, so that rxeqp's advice
 * when it cannot trace fits the host: no RDMA device at all, a hardware
 * RNIC (whose QPs live in the NIC, out of rdma_rxe's reach), rdma_rxe
 * loaded without the module BTF rxeqp reads it through.
 */
#ifndef AGENTXDP_RXEQP_HOST_H
#define AGENTXDP_RXEQP_HOST_H

#include <stdbool.h>
#include <stddef.h>

struct rxeqp_host {
	int ndevs;		/* /sys/class/infiniband entries */
	int nother;		/* of those, not rdma_rxe's */
	char other_dev[64];	/* the first of those */
	char other_driver[64];	/* its device's driver; "" for a software one */
	bool rxe_loaded;	/* /sys/module/rdma_rxe */
	bool rxe_btf;		/* /sys/kernel/btf/rdma_rxe */
	bool rxe_module;	/* this kernel has an rdma_rxe to load */
};

void rxeqp_host_probe(struct rxeqp_host *h);
/* why rxeqp cannot trace here and what to do, one line, in buf */
const char *rxeqp_host_advice(const struct rxeqp_host *h, char *buf, size_t len);

#endif
