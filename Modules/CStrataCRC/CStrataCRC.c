// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) with the CPU's own instruction.
//
// Every LMDB row read verifies a CRC-32C, and the table-driven Swift code costs a
// noticeable share of a fetch. x86_64 (SSE4.2 `crc32`) and arm64 (the CRC extension's
// `crc32c*`) compute exactly this polynomial in hardware, 8 bytes per instruction.
// The functions carrying the instruction are compiled for that feature only
// (target attribute), so the rest of the build keeps the baseline ISA, and they are
// called only after a one-time check that the running CPU has the feature.

#include "CStrataCRC.h"

#include <stdatomic.h>
#include <string.h>

// Each architecture names its feature and its four instruction widths; one function body
// below uses them.
#if defined(__x86_64__)

#define STRATA_CRC_HAS_IMPLEMENTATION 1
#define CRC_TARGET __attribute__((target("sse4.2")))
#define CRC_8(crc, word) ((uint32_t)__builtin_ia32_crc32di((crc), (word)))
#define CRC_4(crc, word) __builtin_ia32_crc32si((crc), (word))
#define CRC_2(crc, word) __builtin_ia32_crc32hi((crc), (word))
#define CRC_1(crc, byte) __builtin_ia32_crc32qi((crc), (byte))

static bool detect_hardware(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}

#elif defined(__aarch64__) && (defined(__ARM_FEATURE_CRC32) || defined(__linux__))

#define STRATA_CRC_HAS_IMPLEMENTATION 1
#define CRC_TARGET __attribute__((target("+crc")))
#define CRC_8(crc, word) __crc32cd((crc), (word))
#define CRC_4(crc, word) __crc32cw((crc), (word))
#define CRC_2(crc, word) __crc32ch((crc), (word))
#define CRC_1(crc, byte) __crc32cb((crc), (byte))

#include <arm_acle.h>

#if defined(__ARM_FEATURE_CRC32)
// The target baseline already includes the CRC extension (e.g. every Apple arm64 Mac).
static bool detect_hardware(void) { return true; }
#else
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
static bool detect_hardware(void) { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
#endif

#endif

#if defined(STRATA_CRC_HAS_IMPLEMENTATION)

// 8 bytes per instruction, then a 4-, 2- and 1-byte tail. Loads go through memcpy, so the
// data need not be aligned.
CRC_TARGET
static uint32_t crc32c_hardware(uint32_t crc, const unsigned char *p, size_t count) {
    for (; count >= 8; p += 8, count -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = CRC_8(crc, word);
    }
    if (count & 4) {
        uint32_t word;
        memcpy(&word, p, 4);
        crc = CRC_4(crc, word);
        p += 4;
    }
    if (count & 2) {
        uint16_t word;
        memcpy(&word, p, 2);
        crc = CRC_2(crc, word);
        p += 2;
    }
    if (count & 1) {
        crc = CRC_1(crc, *p);
    }
    return crc;
}

#endif

#if defined(STRATA_CRC_HAS_IMPLEMENTATION)

// 0: not yet checked, 1: no instruction, 2: instruction present. Racing first
// callers all compute the same answer, so relaxed ordering suffices.
static _Atomic int hardware_state = 0;

bool strata_crc32c_hardware_available(void) {
    int state = atomic_load_explicit(&hardware_state, memory_order_relaxed);
    if (state == 0) {
        state = detect_hardware() ? 2 : 1;
        atomic_store_explicit(&hardware_state, state, memory_order_relaxed);
    }
    return state == 2;
}

bool strata_crc32c(uint32_t *crc, const void *data, size_t count) {
    if (!strata_crc32c_hardware_available()) return false;
    *crc = crc32c_hardware(*crc, (const unsigned char *)data, count);
    return true;
}

CRC_TARGET
uint32_t strata_crc32c_hardware_update(uint32_t crc, const void *data, size_t count) {
    return crc32c_hardware(crc, (const unsigned char *)data, count);
}

#else

bool strata_crc32c_hardware_available(void) { return false; }

bool strata_crc32c(uint32_t *crc, const void *data, size_t count) {
    (void)crc;
    (void)data;
    (void)count;
    return false;
}

uint32_t strata_crc32c_hardware_update(uint32_t crc, const void *data, size_t count) {
    (void)data;
    (void)count;
    return crc;
}

#endif
