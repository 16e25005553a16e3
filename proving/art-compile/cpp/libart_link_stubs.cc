/*
 * Stand-ins for the C symbols libart.so.0 (scripts/art-build --full) imports from libraries
 * Debian's packaging builds beside it from this tree (libsigchain, libnativebridge,
 * libnativeloader) and for GetX86Info (the LZMA SDK's CPU probe, which 7-zip's 7z.so does not
 * export): libart is linked with -z now, so a program that loads it must define them even when
 * it never calls them. The compiler harness never starts a Runtime, never loads a native library
 * or a native bridge and never installs signal handlers through sigchain, so each stand-in only
 * says which ART path reached it and aborts: a call here is a harness bug, never a success.
 */
#include <cstdio>
#include <cstdlib>

#define HUBBLE_STANDIN(name)                                                              \
  extern "C" [[noreturn]] void name() {                                                   \
    std::fprintf(stderr, "hubble-compile-method: libart called %s, which the compiler "   \
                         "harness does not provide (no Runtime here)\n", #name);          \
    std::abort();                                                                         \
  }

HUBBLE_STANDIN(AddSpecialSignalHandlerFn)
HUBBLE_STANDIN(CloseNativeLibrary)
HUBBLE_STANDIN(EnsureFrontOfChain)
HUBBLE_STANDIN(GetX86Info)
HUBBLE_STANDIN(InitializeNativeBridge)
HUBBLE_STANDIN(InitializeNativeLoader)
HUBBLE_STANDIN(LoadNativeBridge)
HUBBLE_STANDIN(NativeBridgeGetSignalHandler)
HUBBLE_STANDIN(NativeBridgeGetTrampoline)
HUBBLE_STANDIN(NativeBridgeGetVersion)
HUBBLE_STANDIN(NativeBridgeInitialized)
HUBBLE_STANDIN(NativeLoaderFreeErrorMessage)
HUBBLE_STANDIN(OpenNativeLibrary)
HUBBLE_STANDIN(PreInitializeNativeBridge)
HUBBLE_STANDIN(PreZygoteForkNativeBridge)
HUBBLE_STANDIN(RemoveSpecialSignalHandlerFn)
HUBBLE_STANDIN(ResetNativeLoader)
HUBBLE_STANDIN(SkipAddSignalHandler)
HUBBLE_STANDIN(UnloadNativeBridge)
