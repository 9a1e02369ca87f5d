#ifndef CSTRATACRC_H
#define CSTRATACRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Whether this CPU has a CRC-32C instruction that `strata_crc32c` uses
/// (SSE4.2 on x86_64, the CRC extension on arm64). Checked once, then cached.
bool strata_crc32c_hardware_available(void);

/// Advances the running CRC-32C `*crc` over `count` bytes at `data` with the CPU's
/// CRC-32C instruction. No initial or final inversion: the caller starts from
/// 0xFFFFFFFF and inverts the result. Returns false, leaving `*crc` unchanged,
/// when the CPU has no such instruction; the caller then computes it in software.
bool strata_crc32c(uint32_t *crc, const void *data, size_t count);

/// `strata_crc32c` without the check: returns the running CRC-32C `crc` advanced over
/// `count` bytes at `data` with the CPU's instruction. Call it only after
/// `strata_crc32c_hardware_available()` returned true (a row check calls it for every row,
/// and the check and the out parameter cost a noticeable share); otherwise it returns
/// `crc` unchanged.
uint32_t strata_crc32c_hardware_update(uint32_t crc, const void *data, size_t count);

#endif
