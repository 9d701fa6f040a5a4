# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# AgentXDP: build the BPF objects, skeletons, tools and tests.
# SANITIZE=1: the user-space code (tools, the native rocelat -r build, unit
# tests) with ASan and UBSan, alignment included, any report fatal; its own
# tree, build/san (tests: AX_BUILD=build/san)
ifeq ($(SANITIZE),1)
OUTPUT ?= build/san
SAN_FLAGS := -fsanitize=address,undefined -fsanitize=alignment \
	-fno-sanitize-recover=all -fno-omit-frame-pointer
else
OUTPUT ?= build
endif
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
# the README: --help's "Report bugs to" names its section there
docdir ?= $(prefix)/share/doc/agentxdp
# the Prometheus rules (README: Fleet output)
promrulesdir ?= $(prefix)/share/agentxdp/prometheus
DESTDIR ?=

# a folder per tool: tools/<tool>/ holds its BPF side (<tool>.bpf.c, its
# parts <tool>_*.bpf.h, the types both sides share in <tool>.h), its loader
# <tool>.c and every other .c and .h of its own; tools/lib/ and bpf/lib/
# are what two or more tools share
TOOL_DIRS := $(filter-out lib,$(patsubst tools/%/,%,$(wildcard tools/*/)))
# a folder with <tool>.bpf.c is a tool on its own BPF object
BPF_TOOLS := $(foreach t,$(TOOL_DIRS),$(if $(wildcard tools/$(t)/$(t).bpf.c),$(t)))
# a tool without BPF of its own (rocediag) loads other tools' objects:
# tools/<tool>/<tool>.uses names those tools, whose own code it links
USES_TOOLS := $(foreach t,$(TOOL_DIRS),$(if $(wildcard tools/$(t)/$(t).uses),$(t)))
uses_tools = $(shell sed -n 's/^\([a-z0-9_]*\)$$/\1/p' tools/$(1)/$(1).uses)
# what is built, installed, packaged and documented as a tool
TOOLS := $(BPF_TOOLS) $(USES_TOOLS)
# programs without BPF (not installed as tools): a folder with neither,
# built like a tool, linked with the same library
EXTRA_PROGS := $(filter-out $(TOOLS),$(TOOL_DIRS))
LIB_SRCS := $(wildcard tools/lib/*.c)
LIB_OBJS := $(patsubst tools/lib/%.c,$(OUTPUT)/lib/%.o,$(LIB_SRCS))
LIB_HDRS := $(wildcard tools/lib/*.h) $(wildcard bpf/lib/*.h)
# a tool's own sources and headers, its objects: $(OUTPUT)/obj/<tool>/
tool_srcs = $(filter-out %.bpf.c,$(wildcard tools/$(1)/*.c))
tool_hdrs = $(wildcard tools/$(1)/*.h)
tool_objs = $(patsubst tools/$(1)/%.c,$(OUTPUT)/obj/$(1)/%.o,$(call tool_srcs,$(1)))
# every object of a tool but its main one, in one archive: what a tool
# using it (.uses) and the unit tests link
tool_archive = $(OUTPUT)/obj/$(1)/parts.a
TOOL_ARCHIVES := $(foreach t,$(TOOL_DIRS),$(call tool_archive,$(t)))
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
CFLAGS += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
# the one version string: debian/changelog's, in every tool's --version
VERSION_SRC := $(wildcard debian/changelog)
AX_VERSION := $(or $(if $(VERSION_SRC),$(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' $(VERSION_SRC))),unknown)
ALL_CFLAGS := $(CFLAGS) $(WARN) -I$(OUTPUT) -Itools -Ibpf -D_GNU_SOURCE \
	-DAX_VERSION='"$(AX_VERSION)"'
# AX_HAVE_<kind>_<name> for every type vmlinux.h defines: btf/*.h skip those
VMLINUX_HAVE := $(OUTPUT)/vmlinux_have_$(ARCH).h
# The BPF objects take none of CFLAGS (a distribution's hardening and
# optimisation flags are for the host compiler; tests/host/package.bats).
# Their BTF names the source files, which the skeletons embed: relative to
# the tree, so that the build's directory is not in the programs
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) $(WARN) \
	-I$(VMLINUX_DIR) -Ibpf -Ibpf/lib -Ibtf -include $(VMLINUX_HAVE) \
	-fdebug-prefix-map=$(CURDIR)=.
# kernel-module types generated from module BTF (make btf)
BTF_HDRS := $(wildcard btf/*.h)
LDLIBS_BASE := -lbpf -lelf -lz
ifeq ($(STATIC),1)
LDFLAGS += -static
LDLIBS_BASE += -lzstd
endif
# per-tool extra libraries: <tool>_LDLIBS
rocelat_LDLIBS := -lpcap -lm
rocegen_LDLIBS := -lm
nfdrop_LDLIBS := -lnftables -lnftnl -lmnl
rdmaqp_LDLIBS := -lmnl
# STATIC=1 links libbpf, libelf, zlib and zstd in. A tool that needs a
# library Debian has no usable static archive of lists it in
# <tool>_SHARED_LDLIBS: that library and libc stay dynamic, the rest is
# linked in (-Wl,-Bstatic). Every other program is fully static. Debian's
# libpcap.a needs libdbus-1.a, which needs libsystemd (no .a); libnftables
# and libmnl ship no .a at all.
rocelat_SHARED_LDLIBS := -lpcap -lm
nfdrop_SHARED_LDLIBS := -lnftables -lnftnl -lmnl
rdmaqp_SHARED_LDLIBS := -lmnl
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

.PHONY: all tests check clean test bench install uninstall tools man vmlinux unit vmlinux-arm64 btf btf-check
.DELETE_ON_ERROR:
.SECONDARY:

# test helpers for the Soft-RoCE VM tier, where libibverbs is there to build them
VM_HELPERS := $(if $(wildcard /usr/include/infiniband/verbs.h),$(OUTPUT)/vm/rc_client)

# helpers of make bench (bench/*.sh), built with everything else so that a
# bench never compiles while it measures
BENCH_BINS := $(OUTPUT)/bench/rocelat_bench $(OUTPUT)/bench/rocelat_steady.bpf.o $(OUTPUT)/bench/bpfstat \
	$(OUTPUT)/bench/tcpass

# make: the tools (what install and the Debian package ship); make tests:
# also every program the test tiers and the bench run, some of whose
# inputs are generated by scapy
all: tools

TEST_PROGS := $(UNIT_BINS) $(OUTPUT)/btfmin $(OUTPUT)/udpflood $(VM_HELPERS) $(BENCH_BINS)
tests: tools $(TEST_PROGS)

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

# a BPF object: $(1) built from tools/$(2)/$(2).bpf.c with the further
# flags $(3); the tool's parts <tool>_*.bpf.h are dependencies of the
# object without a Makefile edit. Its skeleton (the pattern rule below) is
# named after the object's file: $(1)_bpf
define BPF_OBJ
$(OUTPUT)/$(1).bpf.o: tools/$(2)/$(2).bpf.c tools/$(2)/$(2).h $(wildcard tools/$(2)/$(2)_*.bpf.h) \
		$(LIB_HDRS) $(BTF_HDRS) $(VMLINUX_HAVE) | $(OUTPUT)
	$$(call msg,BPF,$$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Itools/$(2) $(3) -c $$< -o $$@.tmp
	$(Q)$(BPFTOOL) gen object $$@ $$@.tmp && rm -f $$@.tmp
endef
$(foreach t,$(BPF_TOOLS),$(eval $(call BPF_OBJ,$(t),$(t))))

# rocelat for kernels without bpf_loop (before 5.17): the same source
# with bounded loops (ROCELAT_NO_BPF_LOOP), the same program, map and
# section names, a skeleton of its own (rocelat_noloop_bpf); the loader
# opens one of the two at run time (tools/rocelat/rocelat_kernel.c)
$(eval $(call BPF_OBJ,rocelat_noloop,rocelat,-DROCELAT_NO_BPF_LOOP))
$(OUTPUT)/obj/rocelat/rocelat_kernel.o: $(OUTPUT)/rocelat_noloop.skel.h
# the parser clears its 120-byte pkt_info per packet; gcc's rep stos for
# it took a fifth of -r's user time (perf, bench/offline.sh): stores
# instead, where the compiler has the option (x86 gcc)
NATIVE_MEMSET := $(shell $(CC) -mstringop-strategy=unrolled_loop -E -x c /dev/null \
	>/dev/null 2>&1 && echo -mstringop-strategy=unrolled_loop)
# rocelat -r: the same source compiled by the host compiler
# (tools/rocelat/rocelat_native.c), libbpf's headers replaced by
# tools/rocelat/native/'s
NATIVE_CFLAGS := $(CFLAGS) $(WARN) -Wno-unknown-pragmas -Itools/rocelat/native -Itools/rocelat -Ibpf -Itools \
	-I$(VMLINUX_DIR) -Ibpf/lib -Ibtf -include $(VMLINUX_HAVE) -DAX_NATIVE -DROCELAT_NO_BPF_LOOP \
	-DBPF_NO_PRESERVE_ACCESS_INDEX $(NATIVE_MEMSET)
$(OUTPUT)/obj/rocelat/rocelat_native.o: tools/rocelat/rocelat_native.c tools/rocelat/rocelat.bpf.c \
		$(call tool_hdrs,rocelat) $(wildcard tools/rocelat/rocelat_*.bpf.h tools/rocelat/native/bpf/*.h) \
		$(LIB_HDRS) $(BTF_HDRS) $(VMLINUX_HAVE)
	$(call msg,CC-NATIVE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(NATIVE_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(OUTPUT)/lib/%.o: tools/lib/%.c $(LIB_HDRS) | $(OUTPUT)/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# the programs a prefix applies to alike in --help (cli_as_named)
$(OUTPUT)/lib/cli.o: ALL_CFLAGS += -DAX_PROGS='"$(TOOLS) $(EXTRA_PROGS)"'

$(OUTPUT)/libagentxdp.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

# a tool's objects: every tools/<tool>/*.c, compiled with its own folder
# and the folders of the tools it uses on the include path, after its
# skeleton and theirs; the program links its main object, its archive,
# theirs and the shared library, with its libraries and theirs
tool_uses = $(if $(filter $(1),$(USES_TOOLS)),$(call uses_tools,$(1)))
tool_deps = $(foreach u,$(1) $(call tool_uses,$(1)),$(call tool_hdrs,$(u)) \
	$(if $(filter $(u),$(BPF_TOOLS)),$(OUTPUT)/$(u).skel.h))
define TOOL
$(OUTPUT)/obj/$(1)/%.o: tools/$(1)/%.c $(call tool_deps,$(1)) $(LIB_HDRS) $(VERSION_SRC)
	$$(call msg,CC,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(foreach u,$(1) $(call tool_uses,$(1)),-Itools/$(u)) -c $$< -o $$@
$(call tool_archive,$(1)): $(filter-out $(OUTPUT)/obj/$(1)/$(1).o,$(call tool_objs,$(1)))
	$$(call msg,AR,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)rm -f $$@ && $(AR) rcs $$@ $$^
$(OUTPUT)/$(1): $(OUTPUT)/obj/$(1)/$(1).o $(call tool_archive,$(1)) \
		$(foreach u,$(call tool_uses,$(1)),$(call tool_archive,$(u))) $(OUTPUT)/libagentxdp.a
	$$(call msg,BINARY,$$@)
	$(Q)$(CC) $$(call tool_ldflags,$(1)) $$(filter %.o,$$^) $$(filter %.a,$$^) $$(call tool_ldlibs,$(1)) -o $$@
$(if $(call tool_uses,$(1)),$(1)_LDLIBS := $(foreach u,$(call tool_uses,$(1)),$($(u)_LDLIBS)))
$(if $(call tool_uses,$(1)),$(1)_SHARED_LDLIBS := $(foreach u,$(call tool_uses,$(1)),$($(u)_SHARED_LDLIBS)))
endef
$(foreach t,$(TOOL_DIRS),$(eval $(call TOOL,$(t))))

# module types for CO-RE from a module's BTF: btf/rdma_rxe.h from rdma_rxe
# (loaded, or the Soft-RoCE guest cache); btf-check diffs instead of writing
$(OUTPUT)/btfmin: btf/btfmin.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -D_GNU_SOURCE $(LDFLAGS) $< -lbpf -lelf -lz -o $@

btf: $(OUTPUT)/btfmin
	btf/gen-rdma-rxe.sh $(OUTPUT)/btfmin

btf-check: $(OUTPUT)/btfmin
	btf/gen-rdma-rxe.sh --check $(OUTPUT)/btfmin

# every BPF header compiled on its own, with the objects' flags (its tool's
# folder on the include path): a tool's part or a bpf/lib header includes
# what it uses (tests/host/sizes.bats; BPF_HDR_CHECK=FILE... for others)
BPF_HDR_CHECK ?= $(wildcard tools/*/*.bpf.h bpf/lib/*.bpf.h)
.PHONY: bpf-hdr-check
bpf-hdr-check: $(VMLINUX_HAVE)
	$(Q)rc=0; for h in $(BPF_HDR_CHECK); do \
		case $$h in /*) p=$$h ;; *) p=$(CURDIR)/$$h ;; esac; \
		echo "#include \"$$p\"" | $(CLANG) $(BPF_CFLAGS) -I$$(dirname $$h) \
			-fsyntax-only -x c - || { echo "$$h: does not compile on its own" >&2; rc=1; }; \
	done; exit $$rc

# RoCE-shaped UDP sender of the tests (ax_send_roce) and the benches
$(OUTPUT)/udpflood: tests/lib/udpflood.c $(OUTPUT)/lib/roce_pkt.o | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(LDFLAGS) $^ -o $@

$(OUTPUT)/bench/rocelat_bench: bench/rocelat_bench.c $(OUTPUT)/rocelat.skel.h tools/rocelat/rocelat.h \
		$(wildcard tests/unit/*.h) $(OUTPUT)/libagentxdp.a
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itools/rocelat -Itests/unit $(LDFLAGS) $< $(OUTPUT)/libagentxdp.a $(LDLIBS_BASE) -o $@

$(OUTPUT)/bench/bpfstat $(OUTPUT)/bench/tcpass: $(OUTPUT)/bench/%: bench/%.c
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

# unit tests: tests/unit/<tool>_*.c may include that tool's skeleton and
# headers, a test-only skeleton (tests/<name>.skel.h) and generated
# packets; each links what it calls from the tools' archives and the
# shared library, with the tools' libraries
TOOL_INCS := $(foreach t,$(TOOL_DIRS),-Itools/$(t))
UNIT_LDLIBS := $(sort $(foreach t,$(TOOL_DIRS),$($(t)_LDLIBS)))
$(OUTPUT)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(foreach t,$(TOOL_DIRS),$(call tool_hdrs,$(t))) \
		$(LIB_HDRS) $(addprefix $(OUTPUT)/,$(addsuffix .skel.h,$(BPF_TOOLS))) $(UNIT_SKELS) $(UNIT_GEN) \
		$(TOOL_ARCHIVES) $(OUTPUT)/libagentxdp.a | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(TOOL_INCS) $(LDFLAGS) $< -Wl,--start-group $(TOOL_ARCHIVES) \
		$(OUTPUT)/libagentxdp.a -Wl,--end-group $(UNIT_LDLIBS) $(LDLIBS_BASE) -o $@

unit: $(UNIT_BINS)

# make sanitize: the tools and the unit tests again, SANITIZE=1, in
# $(OUTPUT)/san (tests/run's san tier runs them)
.PHONY: sanitize fuzz fuzz-build
sanitize:
	$(MAKE) SANITIZE=1 OUTPUT=$(OUTPUT)/san tests

# make fuzz: tests/fuzz/rocelat_fuzz.c (the capture reader, and rocelat's
# BPF source compiled natively) under libFuzzer, ASan and UBSan, for
# FUZZ_SECONDS, seeded with tests/lib/roce_captures.py's captures
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN := -O1 -g -fsanitize=fuzzer,address,undefined -fsanitize=alignment \
	-fno-sanitize-recover=all
$(OUTPUT)/fuzz/rocelat_native.o: $(OUTPUT)/obj/rocelat/rocelat_native.o
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) $(filter-out $(NATIVE_MEMSET) $(SAN_FLAGS),$(NATIVE_CFLAGS)) \
		-c tools/rocelat/rocelat_native.c -o $@
$(OUTPUT)/fuzz/rocelat_fuzz: tests/fuzz/rocelat_fuzz.c tools/rocelat/capture.c tools/rocelat/bpfnative.c \
		tools/lib/roce_pkt.c $(OUTPUT)/fuzz/rocelat_native.o $(call tool_hdrs,rocelat) $(LIB_HDRS)
	$(call msg,CC-FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) $(WARN) -D_GNU_SOURCE -Itools -Itools/rocelat \
		$(filter %.c %.o,$^) -lpcap -o $@
fuzz-build: $(OUTPUT)/fuzz/rocelat_fuzz
fuzz: fuzz-build
	tests/fuzz/run $(FUZZ_SECONDS)

check test: tests
	tests/run

# the Debian package as a reviewer checks it: the source package, a build
# from it in a clean offline Debian 12 chroot, autopkgtest (root, network
# for the chroot's first making; scripts/deb-check.sh)
.PHONY: deb-check
deb-check:
	scripts/deb-check.sh

bench: tests
	bench/run

# the tools alone (what install and the Debian package ship)
tools: $(addprefix $(OUTPUT)/,$(TOOLS) $(EXTRA_PROGS))

# man/<tool>.8 from the tool's own --help (scripts/help-for-man.sh shapes it
# for help2man) plus man/<tool>.h2m (OUTPUT, OVERHEAD, REQUIREMENTS, ...).
# The pages are committed, so building and installing need no help2man;
# tests/host/docs.bats fails when a page and its --help disagree. Dated by
# debian/changelog (or SOURCE_DATE_EPOCH), so regenerating does not churn.
MAN_PAGES := $(patsubst %,man/%.8,$(TOOLS)) $(patsubst %,man/%.1,$(EXTRA_PROGS))
MAN_DATE = $(or $(SOURCE_DATE_EPOCH),$(shell dpkg-parsechangelog -l debian/changelog -STimestamp 2>/dev/null || date +%s))
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

SAMPLES := $(wildcard samples/*.pcap samples/*.txt)
# APP_PREFIX=bpf- installs rxedrop as bpf-rxedrop (bcc libbpf-tools' knob,
# for distributions that rename tools): the programs, their man pages
# (named and naming them so, scripts/man-prefix.sh) and completions; the
# programs' --help and --version name them as they are run (argv[0])
APP_PREFIX ?=
MAN_INSTALLED := $(wildcard man/*.8 man/*.1)
install: tools
	install -d $(DESTDIR)$(sbindir)
	for t in $(TOOLS); do install -m 0755 $(OUTPUT)/$$t $(DESTDIR)$(sbindir)/$(APP_PREFIX)$$t || exit 1; done
	install -d $(DESTDIR)$(bindir)
	for t in $(EXTRA_PROGS); do install -m 0755 $(OUTPUT)/$$t $(DESTDIR)$(bindir)/$(APP_PREFIX)$$t || exit 1; done
	for f in $(MAN_INSTALLED); do d=$(DESTDIR)$(mandir)/man$${f##*.}; install -d $$d && \
		scripts/man-prefix.sh '$(APP_PREFIX)' '$(TOOLS) $(EXTRA_PROGS)' < $$f > $$d/$(APP_PREFIX)$${f#man/} && \
		chmod 0644 $$d/$(APP_PREFIX)$${f#man/} || exit 1; done
	install -d $(DESTDIR)$(bashcompdir)
	for t in $(TOOLS); do \
		install -m 0644 completion/agentxdp.bash $(DESTDIR)$(bashcompdir)/$(APP_PREFIX)$$t || exit 1; done
	install -d $(DESTDIR)$(docdir)
	install -m 0644 README.md $(DESTDIR)$(docdir)/
	# recordings made by the suite, for rocelat -r (README: rocelat)
	$(if $(SAMPLES),install -d $(DESTDIR)$(docdir)/samples)
	$(if $(SAMPLES),install -m 0644 $(SAMPLES) $(DESTDIR)$(docdir)/samples/)
	install -d $(DESTDIR)$(promrulesdir)
	install -m 0644 prometheus/agentxdp.rules.yml $(DESTDIR)$(promrulesdir)/

# removes every file install put there; directories stay (shared with others)
uninstall:
	rm -f $(addprefix $(DESTDIR)$(sbindir)/$(APP_PREFIX),$(TOOLS))
	rm -f $(addprefix $(DESTDIR)$(bindir)/$(APP_PREFIX),$(EXTRA_PROGS))
	rm -f $(addprefix $(DESTDIR)$(mandir)/man1/$(APP_PREFIX),$(notdir $(wildcard man/*.1)))
	rm -f $(addprefix $(DESTDIR)$(mandir)/man8/$(APP_PREFIX),$(addsuffix .8,$(TOOLS)) $(notdir $(wildcard man/*.8)))
	rm -f $(addprefix $(DESTDIR)$(bashcompdir)/$(APP_PREFIX),$(TOOLS))
	rm -f $(DESTDIR)$(docdir)/README.md
	rm -f $(addprefix $(DESTDIR)$(docdir)/samples/,$(notdir $(wildcard samples/*.pcap samples/*.txt)))
	rm -f $(DESTDIR)$(promrulesdir)/agentxdp.rules.yml

clean:
	rm -rf $(OUTPUT)
