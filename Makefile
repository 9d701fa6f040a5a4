# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# AgentXDP: build the BPF objects, skeletons, tools and tests.
OUTPUT ?= build
CLANG ?= clang
CC ?= gcc
BPFTOOL ?= bpftool
ARCH ?= $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
VMLINUX_DIR := vmlinux/$(ARCH)
prefix ?= /usr/local
sbindir ?= $(prefix)/sbin
bindir ?= $(prefix)/bin
mandir ?= $(prefix)/share/man
bashcompdir ?= $(prefix)/share/bash-completion/completions
DESTDIR ?=

# every bpf/<tool>.bpf.c is a tool with tools/<tool>.c as its loader
BPF_TOOLS := $(patsubst bpf/%.bpf.c,%,$(wildcard bpf/*.bpf.c))
# a tool without BPF of its own (rocediag) loads other tools' objects:
# tools/<tool>.uses names them and the parts of theirs it links
USES_TOOLS := $(patsubst tools/%.uses,%,$(wildcard tools/*.uses))
uses_tools = $(shell sed -n 's/^\([a-z0-9_]*\):.*/\1/p' tools/$(1).uses)
uses_parts = $(shell sed -n 's/^[a-z0-9_]*://p' tools/$(1).uses)
# what is built, installed, packaged and documented as a tool
TOOLS := $(BPF_TOOLS) $(USES_TOOLS)
# programs without BPF (not installed): tools/<prog>.c, with parts and
# headers like a tool's, linked with the same library
EXTRA_PROGS := $(patsubst tools/%.c,%,$(wildcard tools/rocegen.c))
LIB_SRCS := $(wildcard tools/lib/*.c)
LIB_OBJS := $(patsubst tools/lib/%.c,$(OUTPUT)/lib/%.o,$(LIB_SRCS))
LIB_HDRS := $(wildcard tools/lib/*.h) $(wildcard bpf/lib/*.h)
UNIT_SRCS := $(filter-out %.bpf.c,$(wildcard tests/unit/*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
# test-only BPF objects: tests/unit/<name>.bpf.c -> build/tests/<name>.skel.h
UNIT_SKELS := $(patsubst tests/unit/%.bpf.c,$(OUTPUT)/tests/%.skel.h,$(wildcard tests/unit/*.bpf.c))
# packets of an independent builder (scapy), generated at build time
PYTHON_SCAPY ?= /usr/bin/python3
UNIT_GEN := $(patsubst tests/unit/gen_%.py,$(OUTPUT)/tests/%_pkts.h,$(wildcard tests/unit/gen_*.py))

WARN := -Wall -Wextra -Wno-unused-parameter
# WERROR=1 (CI: scripts/test.sh): every warning fails the build
ifeq ($(WERROR),1)
WARN += -Werror
endif
CFLAGS ?= -O2 -g
# the one version string: debian/changelog's, in every tool's --version
VERSION_SRC := $(wildcard debian/changelog)
AX_VERSION := $(or $(if $(VERSION_SRC),$(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' $(VERSION_SRC))),unknown)
ALL_CFLAGS := $(CFLAGS) $(WARN) -I$(OUTPUT) -Itools -Ibpf -D_GNU_SOURCE \
	-DAX_VERSION='"$(AX_VERSION)"'
# AX_HAVE_<kind>_<name> for every type vmlinux.h defines: btf/*.h skip those
VMLINUX_HAVE := $(OUTPUT)/vmlinux_have_$(ARCH).h
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) $(WARN) \
	-I$(VMLINUX_DIR) -Ibpf -Ibpf/lib -Ibtf -include $(VMLINUX_HAVE)
# kernel-module types generated from module BTF (make btf)
BTF_HDRS := $(wildcard btf/*.h)
LDLIBS_BASE := -lbpf -lelf -lz
ifeq ($(STATIC),1)
LDFLAGS += -static
LDLIBS_BASE += -lzstd
endif
# per-tool extra libraries: <tool>_LDLIBS
rocelat_LDLIBS := -lpcap
rocegen_LDLIBS := -lm
nfdrop_LDLIBS := -lnftables -lnftnl -lmnl
# STATIC=1 links libbpf, libelf, zlib and zstd in. A tool that needs a
# library Debian has no usable static archive of lists it in
# <tool>_SHARED_LDLIBS: that library and libc stay dynamic, the rest is
# linked in (-Wl,-Bstatic). Every other program is fully static. Debian's
# libpcap.a needs libdbus-1.a, which needs libsystemd (no .a); libnftables
# and libmnl ship no .a at all.
rocelat_SHARED_LDLIBS := -lpcap
nfdrop_SHARED_LDLIBS := -lnftables -lnftnl -lmnl
ifeq ($(STATIC),1)
LINK_STATIC := -Wl,-Bstatic
LINK_DYNAMIC := -Wl,-Bdynamic
tool_ldflags = $(if $($(1)_SHARED_LDLIBS),$(filter-out -static,$(LDFLAGS)),$(LDFLAGS))
tool_ldlibs = $(if $($(1)_SHARED_LDLIBS),$($(1)_SHARED_LDLIBS) $(LINK_STATIC) $(LDLIBS_BASE) $(LINK_DYNAMIC),$($(1)_LDLIBS) $(LDLIBS_BASE))
else
tool_ldflags = $(LDFLAGS)
tool_ldlibs = $($(1)_LDLIBS) $(LDLIBS_BASE)
endif

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all clean test bench install uninstall tools man vmlinux unit vmlinux-arm64 btf btf-check
.DELETE_ON_ERROR:
.SECONDARY:

# test helpers for the Soft-RoCE VM tier, where libibverbs is there to build them
VM_HELPERS := $(if $(wildcard /usr/include/infiniband/verbs.h),$(OUTPUT)/vm/rc_client)

# helpers of make bench (bench/*.sh), built with everything else so that a
# bench never compiles while it measures
BENCH_BINS := $(OUTPUT)/bench/rocelat_bench $(OUTPUT)/bench/rocelat_steady.bpf.o $(OUTPUT)/bench/bpfstat

all: $(addprefix $(OUTPUT)/,$(TOOLS) $(EXTRA_PROGS)) $(UNIT_BINS) $(OUTPUT)/btfmin $(OUTPUT)/udpflood $(VM_HELPERS) $(BENCH_BINS)

$(OUTPUT) $(OUTPUT)/lib $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(VMLINUX_DIR)/vmlinux.h:
	@echo "missing $@: run 'make vmlinux' on a $(ARCH) kernel with BTF" >&2; exit 1

# regenerate the vendored vmlinux.h from the running kernel's BTF
vmlinux:
	$(call msg,GEN,$(VMLINUX_DIR)/vmlinux.h)
	$(Q)mkdir -p $(VMLINUX_DIR)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX_DIR)/vmlinux.h

# vmlinux.h of another architecture, from Debian's kernel package for it
vmlinux-arm64:
	$(call msg,GEN,vmlinux/arm64/vmlinux.h)
	$(Q)vmlinux/gen-from-deb.sh arm64

$(VMLINUX_HAVE): $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)sed -n 's/^\(struct\|union\|enum\) \([A-Za-z0-9_]*\) {$$/#define AX_HAVE_\1_\2 1/p' $< > $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c bpf/%.h $(LIB_HDRS) $(BTF_HDRS) $(VMLINUX_HAVE) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

# a BPF object's parts: bpf/<tool>_<part>.bpf.h, included by bpf/<tool>.bpf.c
$(foreach t,$(BPF_TOOLS),$(eval $(OUTPUT)/$(t).bpf.o: $(wildcard bpf/$(t)_*.bpf.h)))

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(OUTPUT)/lib/%.o: tools/lib/%.c $(LIB_HDRS) | $(OUTPUT)/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/libagentxdp.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(OUTPUT)/%.o: tools/%.c $(OUTPUT)/%.skel.h bpf/%.h $(LIB_HDRS) $(VERSION_SRC) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@


$(addprefix $(OUTPUT)/,$(addsuffix .o,$(EXTRA_PROGS))): $(OUTPUT)/%.o: tools/%.c $(LIB_HDRS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# a program's further objects: tools/<prog>_<part>.c (nfdrop_evidence.c,
# rocegen_requester.c), each with the program's headers tools/<prog>.h and
# tools/<prog>_*.h and, for a BPF tool, its skeleton; the program links
# them all in
tool_parts = $(patsubst tools/%.c,$(OUTPUT)/%.o,$(wildcard tools/$(1)_*.c))
tool_hdrs = $(wildcard tools/$(1).h tools/$(1)_*.h)
tool_bpf_deps = $(if $(filter $(1),$(BPF_TOOLS)),$(OUTPUT)/$(1).skel.h bpf/$(1).h)
define TOOL_PARTS
$(OUTPUT)/$(1)_%.o: tools/$(1)_%.c $(call tool_hdrs,$(1)) $(call tool_bpf_deps,$(1)) $(LIB_HDRS) | $(OUTPUT)
	$$(call msg,CC,$$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $$< -o $$@
$(OUTPUT)/$(1): $(call tool_parts,$(1))
$(OUTPUT)/$(1).o: $(call tool_hdrs,$(1))
endef
$(foreach t,$(TOOLS) $(EXTRA_PROGS),$(eval $(call TOOL_PARTS,$(t))))

# a tool of tools/<tool>.uses: the skeletons and headers of the tools it
# uses, their parts it links, and their libraries
define USES_TOOL
$(OUTPUT)/$(1).o $(patsubst tools/%.c,$(OUTPUT)/%.o,$(wildcard tools/$(1)_*.c)): \
	$(foreach u,$(call uses_tools,$(1)),$(OUTPUT)/$(u).skel.h bpf/$(u).h $(call tool_hdrs,$(u)))
$(OUTPUT)/$(1).o: tools/$(1).c $(LIB_HDRS) $(VERSION_SRC) | $(OUTPUT)
	$$(call msg,CC,$$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $$< -o $$@
$(OUTPUT)/$(1): $(addprefix $(OUTPUT)/,$(addsuffix .o,$(call uses_parts,$(1))))
$(1)_LDLIBS := $(foreach u,$(call uses_tools,$(1)),$($(u)_LDLIBS))
$(1)_SHARED_LDLIBS := $(foreach u,$(call uses_tools,$(1)),$($(u)_SHARED_LDLIBS))
endef
$(foreach t,$(USES_TOOLS),$(eval $(call USES_TOOL,$(t))))

$(addprefix $(OUTPUT)/,$(TOOLS) $(EXTRA_PROGS)): $(OUTPUT)/%: $(OUTPUT)/%.o $(OUTPUT)/libagentxdp.a
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(call tool_ldflags,$*) $(filter %.o,$^) $(filter %.a,$^) $(call tool_ldlibs,$*) -o $@

# module types for CO-RE from a module's BTF: btf/rdma_rxe.h from rdma_rxe
# (loaded, or the Soft-RoCE guest cache); btf-check diffs instead of writing
$(OUTPUT)/btfmin: btf/btfmin.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -D_GNU_SOURCE $(LDFLAGS) $< -lbpf -lelf -lz -o $@

btf: $(OUTPUT)/btfmin
	btf/gen-rdma-rxe.sh $(OUTPUT)/btfmin

btf-check: $(OUTPUT)/btfmin
	btf/gen-rdma-rxe.sh --check $(OUTPUT)/btfmin

# RoCE-shaped UDP sender of the tests (ax_send_roce) and the benches
$(OUTPUT)/udpflood: tests/lib/udpflood.c $(OUTPUT)/lib/roce_pkt.o | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(LDFLAGS) $^ -o $@

$(OUTPUT)/bench/rocelat_bench: bench/rocelat_bench.c $(OUTPUT)/rocelat.skel.h bpf/rocelat.h $(wildcard tests/unit/*.h) $(OUTPUT)/libagentxdp.a
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $(LDFLAGS) $< $(OUTPUT)/libagentxdp.a $(LDLIBS_BASE) -o $@

$(OUTPUT)/bench/bpfstat: bench/bpfstat.c
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(LDFLAGS) $< $(LDLIBS_BASE) -o $@

$(OUTPUT)/bench/%.bpf.o: bench/%.bpf.c $(VMLINUX_HAVE)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/vm/%: tests/vm/%.c
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(LDFLAGS) $< -libverbs -o $@

$(OUTPUT)/tests/%.bpf.o: tests/unit/%.bpf.c $(LIB_HDRS) $(VMLINUX_HAVE) | $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

# tests/unit/gen_<name>.py writes build/tests/<name>_pkts.h (and a pcap)
$(OUTPUT)/tests/%_pkts.h: tests/unit/gen_%.py | $(OUTPUT)/tests
	$(call msg,GEN,$@)
	$(Q)$(PYTHON_SCAPY) $< $@ $(OUTPUT)/tests/$*.pcap

# unit tests: tests/unit/<tool>_*.c may include that tool's skeleton, a
# test-only skeleton (tests/<name>.skel.h) and generated packets;
# <test>_UNIT_LDLIBS: the libraries of the code it tests
nfmatch_UNIT_LDLIBS := $(nfdrop_LDLIBS)
$(OUTPUT)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(wildcard bpf/*.h) $(LIB_HDRS) $(addprefix $(OUTPUT)/,$(addsuffix .skel.h,$(BPF_TOOLS))) $(UNIT_SKELS) $(UNIT_GEN) $(OUTPUT)/libagentxdp.a | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(OUTPUT)/libagentxdp.a $($*_UNIT_LDLIBS) $(LDLIBS_BASE) -o $@

unit: $(UNIT_BINS)

test: all
	tests/run

bench: all
	bench/run

# the tools alone (what install and the Debian package ship)
tools: $(addprefix $(OUTPUT)/,$(TOOLS) $(EXTRA_PROGS))

# man/<tool>.8 from the tool's own --help (scripts/help-for-man.sh shapes it
# for help2man) plus man/<tool>.h2m (OUTPUT, OVERHEAD, REQUIREMENTS, ...).
# The pages are committed, so building and installing need no help2man;
# tests/host/docs.bats fails when a page and its --help disagree. Dated by
# debian/changelog, so regenerating does not churn.
MAN_PAGES := $(patsubst %,man/%.8,$(TOOLS)) $(patsubst %,man/%.1,$(EXTRA_PROGS))
MAN_DATE = $(shell dpkg-parsechangelog -l debian/changelog -STimestamp 2>/dev/null || date +%s)
HELP2MAN ?= help2man

man: $(MAN_PAGES)

man/%.8: $(OUTPUT)/% man/%.h2m scripts/help-for-man.sh
	$(call msg,MAN,$@)
	$(Q)SOURCE_DATE_EPOCH=$(MAN_DATE) $(HELP2MAN) --no-info --section=8 \
		--include=man/$*.h2m --output=$@.tmp "scripts/help-for-man.sh $(OUTPUT)/$*"
	$(Q)mv $@.tmp $@

# a program without argp (rocegen) writes a help2man-ready --help itself
man/%.1: $(OUTPUT)/% man/%.h2m
	$(call msg,MAN,$@)
	$(Q)SOURCE_DATE_EPOCH=$(MAN_DATE) $(HELP2MAN) --no-info --section=1 \
		--include=man/$*.h2m --output=$@.tmp $(OUTPUT)/$*
	$(Q)mv $@.tmp $@

install: tools
	install -d $(DESTDIR)$(sbindir)
	install -m 0755 $(addprefix $(OUTPUT)/,$(TOOLS)) $(DESTDIR)$(sbindir)/
	install -d $(DESTDIR)$(bindir)
	install -m 0755 $(addprefix $(OUTPUT)/,$(EXTRA_PROGS)) $(DESTDIR)$(bindir)/
	if [ -d man ] && ls man/*.8 >/dev/null 2>&1; then \
		install -d $(DESTDIR)$(mandir)/man8 && install -m 0644 man/*.8 $(DESTDIR)$(mandir)/man8/; fi
	if [ -d man ] && ls man/*.1 >/dev/null 2>&1; then \
		install -d $(DESTDIR)$(mandir)/man1 && install -m 0644 man/*.1 $(DESTDIR)$(mandir)/man1/; fi
	install -d $(DESTDIR)$(bashcompdir)
	for t in $(TOOLS); do \
		install -m 0644 completion/agentxdp.bash $(DESTDIR)$(bashcompdir)/$$t || exit 1; done

# removes every file install put there; directories stay (shared with others)
uninstall:
	rm -f $(addprefix $(DESTDIR)$(sbindir)/,$(TOOLS))
	rm -f $(addprefix $(DESTDIR)$(bindir)/,$(EXTRA_PROGS))
	rm -f $(addprefix $(DESTDIR)$(mandir)/man1/,$(notdir $(wildcard man/*.1)))
	rm -f $(addprefix $(DESTDIR)$(mandir)/man8/,$(addsuffix .8,$(TOOLS)) $(notdir $(wildcard man/*.8)))
	rm -f $(addprefix $(DESTDIR)$(bashcompdir)/,$(TOOLS))

clean:
	rm -rf $(OUTPUT)
