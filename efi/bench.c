/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Phase timestamps for the loader-time benchmark (make bench-efi,
 * scripts/bench/loadtime.sh, docs/BENCHMARK.md "Loader time"). Compiled
 * into build/bench/mshimx64.efi only (-DMB_BENCH); the release loader
 * does not link this file.
 *
 * The clock is the time-stamp counter: gBS->GetTime has a resolution of a
 * second on OVMF. Its rate is measured once against the firmware's Stall
 * (which OVMF times with the ACPI PM timer), before the first phase
 * starts, so the calibration is in no phase.
 */
#ifdef MB_BENCH
#include "mshim.h"

#define BENCH_MAX_MARKS 64
#define BENCH_CALIBRATE_US 20000

static struct {
        const CHAR16 *phase;
        UINT64 tsc;
} bench_marks[BENCH_MAX_MARKS];
static UINTN bench_n;
static UINT64 bench_per_ms;     /* TSC ticks per millisecond */

static UINT64 bench_rdtsc(void) {
        UINT32 lo, hi;

        __asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi));
        return ((UINT64) hi << 32) | lo;
}

void mshim_bench_mark(const CHAR16 *phase) {
        if (bench_per_ms == 0) {
                UINT64 t0 = bench_rdtsc();

                BS->Stall(BENCH_CALIBRATE_US);
                bench_per_ms = (bench_rdtsc() - t0) / (BENCH_CALIBRATE_US / 1000);
                if (bench_per_ms == 0)
                        bench_per_ms = 1;
        }
        if (bench_n < BENCH_MAX_MARKS)
                bench_marks[bench_n++] = (typeof(bench_marks[0])) { phase, bench_rdtsc() };
}

/* One line per phase, "mshim-bench: <microseconds> <phase>", the time
 * since the previous mark; then the total since the first. */
void mshim_bench_report(void) {
        for (UINTN i = 1; i < bench_n; i++)
                Print(L"mshim-bench: %ld %s\n", (bench_marks[i].tsc - bench_marks[i - 1].tsc) * 1000 / bench_per_ms,
                      bench_marks[i].phase);
        if (bench_n > 1)
                Print(L"mshim-bench: %ld total\n", (bench_marks[bench_n - 1].tsc - bench_marks[0].tsc) * 1000 / bench_per_ms);
}
#endif
