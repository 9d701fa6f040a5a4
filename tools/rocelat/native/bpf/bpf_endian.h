/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libbpf's <bpf/bpf_endian.h> for BPF C compiled natively (bpf_helpers.h
 * here says why) */
#ifndef AGENTXDP_NATIVE_BPF_ENDIAN_H
#define AGENTXDP_NATIVE_BPF_ENDIAN_H

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define bpf_htons(x)	__builtin_bswap16(x)
#define bpf_ntohs(x)	__builtin_bswap16(x)
#define bpf_htonl(x)	__builtin_bswap32(x)
#define bpf_ntohl(x)	__builtin_bswap32(x)
#else
#define bpf_htons(x)	((__u16)(x))
#define bpf_ntohs(x)	((__u16)(x))
#define bpf_htonl(x)	((__u32)(x))
#define bpf_ntohl(x)	((__u32)(x))
#endif

#endif
