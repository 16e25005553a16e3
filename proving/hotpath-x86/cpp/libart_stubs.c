/*
 * Hubble for AOSP: stand-ins for the functions the patched libart.so.0 of scripts/art-build
 * --full leaves undefined and no library in the build root defines: ART's libnativebridge and
 * libnativeloader (Debian builds them as separate libraries, not installed in the build root)
 * and the LZMA SDK's Xz/Crc functions (libart's mini-debug-info). libart is linked with -z now,
 * so the dynamic loader resolves every symbol at start-up even though the byte generator
 * (gen_blobs.cc) never calls one of these. Each aborts if it ever is. A new undefined symbol
 * makes the generator fail at start-up with "symbol lookup error: ... <name>": add it here.
 */
#include <stdio.h>
#include <stdlib.h>

#define STUB(name)                                                           \
  void name(void);                                                           \
  void name(void) {                                                          \
    fprintf(stderr, "gen_blobs: libart called %s, which is a stub\n", #name); \
    abort();                                                                 \
  }

STUB(CloseNativeLibrary)
// libart's static initializers build the LZMA SDK's CRC tables; only xz decoding (never done
// here) reads them: these two return without doing anything.
#define NOOP(name)    \
  void name(void);    \
  void name(void) {}
NOOP(Crc64GenerateTable)
NOOP(CrcGenerateTable)
STUB(InitializeNativeBridge)
STUB(InitializeNativeLoader)
STUB(LoadNativeBridge)
STUB(Lzma2EncProps_Init)
STUB(Lzma2EncProps_Normalize)
STUB(NativeBridgeGetSignalHandler)
STUB(NativeBridgeGetTrampoline)
STUB(NativeBridgeGetVersion)
STUB(NativeBridgeInitialized)
STUB(NativeLoaderFreeErrorMessage)
STUB(OpenNativeLibrary)
STUB(PreInitializeNativeBridge)
STUB(PreZygoteForkNativeBridge)
STUB(ResetNativeLoader)
STUB(UnloadNativeBridge)
STUB(XzProps_Init)
STUB(XzUnpacker_Code)
STUB(XzUnpacker_Construct)
STUB(XzUnpacker_Free)
STUB(XzUnpacker_IsStreamWasFinished)
STUB(Xz_Encode)
