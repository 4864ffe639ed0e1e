/* fuzz-csv.c: libFuzzer entry point of the 'csv' harness (fuzz-targets.h). */
#include "fuzz-targets.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ppsim_fuzz_csv(data, size);
    return 0;
}
