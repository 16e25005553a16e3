# Hubble for AOSP: builds the ART-glue host tests (tests/art-glue.sh runs it inside the trixie
# build root, from the --full tree, so that every flag is libart's: CPPFLAGS/CXXFLAGS of
# debian/libart.mk, plus the bridge headers and the repository's runtime/hubble sources).
#   GLUE_SRC  this directory            GLUE_FILES  art-patches/files/runtime (the glue under test)
#   GLUE_OUT  objects and binaries (cached under $HUBBLE_CACHE/art/glue)
include debian/libart.mk

GLUE_INC = -I$(GLUE_FILES) -Idebian/hubble-include -I$(GLUE_SRC)
# Tests are not part of libart: default visibility, and -fPIC so that libart's protected data
# (Runtime::instance_, Locks::*) is reached through the GOT, never copied.
GLUE_CXXFLAGS = $(CXXFLAGS) -fvisibility=default -fPIC -Wno-deprecated-declarations -g
ANDROID_LIBS = -L/usr/lib/$(DEB_HOST_MULTIARCH)/android -Wl,-rpath=/usr/lib/$(DEB_HOST_MULTIARCH)/android \
  -lbase -llog -lziparchive -lcpu_features -lbacktrace -lnativehelper -lcutils
GLUE_LIBS = -L$(GLUE_OUT) -Wl,-rpath=$(GLUE_OUT) -lglue_shims \
  -Ldebian/out -Wl,-rpath=$(CURDIR)/debian/out -lart $(ANDROID_LIBS) -llz4 -ltinyxml2 -lz -lpthread
# libart.so.0 by its absolute name: an input here, never a target. libart.mk (included above for
# its flags) has a rule for debian/out/libart.so.0 that links WITHOUT the Rust runtime (only
# scripts/art-build --full passes HUBBLE_RUNTIME_LIB); naming that target would let make relink
# it whenever an object looks stale (e.g. after an interrupted asm_defines regeneration), and
# every test would then fail to link against a libart with no bridge. Nothing of libart's is
# remade here: a missing or stale libart.so.0 is scripts/art-build --full's to rebuild.
LIBART = $(CURDIR)/debian/out/libart.so.0

$(GLUE_OUT)/%.o: $(GLUE_SRC)/%.cc $(GLUE_SRC)/glue_test.h
	@mkdir -p $(dir $@)
	$(CXX) -c -MMD -MP -o $@ $< $(CPPFLAGS) $(GLUE_CXXFLAGS) $(GLUE_INC)
$(GLUE_OUT)/hubble/%.o: $(GLUE_FILES)/hubble/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -c -MMD -MP -o $@ $< $(CPPFLAGS) $(GLUE_CXXFLAGS) $(GLUE_INC)

# libart.so.0 needs, at load (it is linked with -z now), symbols of libraries this package builds
# or vendors and the build root does not have (libsigchain, libnativebridge, libnativeloader, the
# LZMA SDK). The tests call none of them: each gets a definition that aborts with its name, made
# from the linker's own list of what is missing. The two exceptions are the SDK's CRC table
# generators, which something runs while the libraries load (a call_once, xz_utils.cc 35-41): they
# return, leaving the tables XZ (de)compression would use empty; nothing here compresses.
$(GLUE_OUT)/libglue_shims.so: $(LIBART)
	@mkdir -p $(GLUE_OUT)
	echo 'int main() { return 0; }' > $(GLUE_OUT)/empty.cc
	$(CXX) -o $(GLUE_OUT)/empty $(GLUE_OUT)/empty.cc $(LDFLAGS_EXE) -Ldebian/out -lart $(ANDROID_LIBS) \
	  -llz4 -ltinyxml2 -lz -fuse-ld=lld -Wl,--error-limit=0 2> $(GLUE_OUT)/missing.log || true
	sed -n 's/^.*undefined reference: \([A-Za-z_][A-Za-z0-9_]*\)$$/\1/p' $(GLUE_OUT)/missing.log | sort -u > $(GLUE_OUT)/missing.txt
	test -s $(GLUE_OUT)/missing.txt || { cat $(GLUE_OUT)/missing.log; exit 1; }
	{ echo '#include <stdio.h>'; echo '#include <stdlib.h>'; \
	  while read -r s; do case "$$s" in CrcGenerateTable|Crc64GenerateTable) printf 'void %s(void) {}\n' "$$s" ;; \
	    *) printf 'void %s(void) { fputs("glue shim: %s called (not in the build root)\\n", stderr); abort(); }\n' "$$s" "$$s" ;; esac; done < $(GLUE_OUT)/missing.txt; \
	} > $(GLUE_OUT)/glue_shims.c
	$(CC) -shared -fPIC -o $@ $(GLUE_OUT)/glue_shims.c -Wl,-soname,libglue_shims.so

# x86_64's block-end function (runtime/hubble/pool_x86_64.S) from the repository (GLUE_FILES
# first: the tree has its own copy), with ART's macros and the tree's asm_defines.h, found
# through absolute -I paths so that its .d names no libart.mk target.
$(GLUE_OUT)/pool_take_x86_64.o: $(GLUE_SRC)/pool_take_x86_64.S $(GLUE_FILES)/hubble/pool_x86_64.S
	@mkdir -p $(dir $@)
	$(CC_ASSEMBLY) -c -MMD -MP -o $@ $< -I$(GLUE_FILES) -I$(CURDIR)/debian/out -I$(CURDIR)/runtime \
	  $(CFLAGS) $(CPPFLAGS)

# The glue under test is compiled from the repository (GLUE_FILES), with libart's flags, into each
# test: the tests see the current source without a relink of libart, and everything it calls is
# libart's (the executable's copies take precedence over libart's own for the tests' calls).
BRIDGE_OBJS = $(GLUE_OUT)/bridge_test.o $(GLUE_OUT)/hubble/hubble_bridge.o $(GLUE_OUT)/hubble/thread_state.o \
  $(GLUE_OUT)/pool_take_x86_64.o
$(GLUE_OUT)/bridge_test: $(BRIDGE_OBJS) $(GLUE_OUT)/libglue_shims.so $(LIBART)
	$(CXX) -o $@ $(BRIDGE_OBJS) $(GLUE_LIBS) -fuse-ld=lld
$(GLUE_OUT)/lifecycle_test: $(GLUE_OUT)/lifecycle_test.o $(GLUE_OUT)/hubble/lifecycle.o $(GLUE_OUT)/libglue_shims.so $(LIBART)
	$(CXX) -o $@ $(GLUE_OUT)/lifecycle_test.o $(GLUE_OUT)/hubble/lifecycle.o $(GLUE_LIBS) -fuse-ld=lld

# The task record: the hook (task_hooks.h, inline) and tasks.cc, with the bridge that calls it.
TASKS_OBJS = $(GLUE_OUT)/tasks_test.o $(GLUE_OUT)/hubble/tasks.o $(GLUE_OUT)/hubble/hubble_bridge.o \
  $(GLUE_OUT)/hubble/thread_state.o $(GLUE_OUT)/pool_take_x86_64.o
$(GLUE_OUT)/tasks_test: $(TASKS_OBJS) $(GLUE_OUT)/libglue_shims.so $(LIBART)
	$(CXX) -o $@ $(TASKS_OBJS) $(GLUE_LIBS) -fuse-ld=lld

glue-tests: $(GLUE_OUT)/bridge_test $(GLUE_OUT)/lifecycle_test $(GLUE_OUT)/tasks_test
.PHONY: glue-tests
-include $(wildcard $(GLUE_OUT)/*.d $(GLUE_OUT)/hubble/*.d)
