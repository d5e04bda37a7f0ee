/**
 * The CPU floor of sending on time: a C loop that does nothing but sleep to
 * absolute deadlines (clock_nanosleep, TIMER_ABSTIME) at the given rate. Any
 * client that sends each request at its own due time pays at least this per
 * request; on a VM a timed wake-up is far from free, so the client-cost
 * figures of the open loop read against it.
 */
import { findExecutable, runCommand } from "./process.ts";

const SOURCE = `
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>
int main(int argc, char **argv) {
  long rate = atol(argv[1]), wakes = rate * atol(argv[2]), period = 1000000000L / rate;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  for (long i = 0; i < wakes; i++) {
    t.tv_nsec += period;
    if (t.tv_nsec >= 1000000000L) { t.tv_nsec -= 1000000000L; t.tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
  }
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  double us = (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
  printf("%.3f\\n", us / wakes);
  return 0;
}
`;

/** CPU µs per timed wake-up at `rate`/s over `seconds`; undefined without a C compiler. */
export async function wakeFloor(rate: number, seconds: number): Promise<number | undefined> {
  const cc = findExecutable("cc") ?? findExecutable("gcc");
  if (cc === undefined) return undefined;
  const dir = await Deno.makeTempDir({ prefix: "inferperf-bench-wake-" });
  try {
    await Deno.writeTextFile(`${dir}/wake.c`, SOURCE);
    const built = await runCommand(cc, ["-O2", "-o", `${dir}/wake`, `${dir}/wake.c`]);
    if (built.code !== 0) throw new Error(`Compiling the wake-up floor failed: ${built.stderr}`);
    const run = await runCommand(`${dir}/wake`, [String(Math.round(rate)), String(seconds)]);
    if (run.code !== 0) throw new Error(`The wake-up floor failed: ${run.stderr}`);
    return Number(run.stdout.trim());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
