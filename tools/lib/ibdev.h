/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What sysfs says of an RDMA device (/sys/class/infiniband/DEV): the
 * driver of its bus device and that driver's module, or that it is a
 * Soft-RoCE device (rdma_rxe's devices have no bus device but a `parent`
 * attribute naming their netdev, rxe_verbs.c). One place for rxeqp's,
 * rdmaqp's and verbslat's view of which driver a device has.
 */
#ifndef AGENTXDP_IBDEV_H
#define AGENTXDP_IBDEV_H

#include <stdbool.h>
#include <stddef.h>

#define IBDEV_CLASS "/sys/class/infiniband"

/* the name of dev's bus driver (mlx5_core, irdma, bnxt_en ...: the last
 * part of SYS/class/infiniband/DEV/device/driver) into buf, "" when it
 * has none; sys is the sysfs root, NULL for /sys */
void ibdev_driver(const char *sys, const char *dev, char *buf, size_t len);
/* the kernel module of dev's driver (of device/driver/module), or
 * "rdma_rxe" for a Soft-RoCE device while rdma_rxe is loaded; "" unknown */
void ibdev_module(const char *sys, const char *dev, char *buf, size_t len);
/* dev is rdma_rxe's: a `parent` attribute and no bus device */
bool ibdev_is_rxe(const char *sys, const char *dev);

#endif
