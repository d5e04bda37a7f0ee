/** The machine a bench ran on, so figures can be compared across machines. */
import { readProc } from "./process.ts";

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  /** 1, 5 and 15 minute load averages. */
  loadAverage: number[];
  kernel: string;
  deno: string;
}

async function cpuModel(): Promise<string> {
  const cpuinfo = await readProc(["/proc/cpuinfo"]);
  return /^model name\s*:\s*(.+)$/m.exec(cpuinfo ?? "")?.[1].trim() ?? "unknown";
}

export async function machineInfo(): Promise<MachineInfo> {
  return {
    cores: navigator.hardwareConcurrency,
    cpuModel: await cpuModel(),
    loadAverage: loadAverage(),
    kernel: Deno.osRelease(),
    deno: Deno.version.deno,
  };
}

export function loadAverage(): number[] {
  return Deno.loadavg().map((v) => Math.round(v * 100) / 100);
}
