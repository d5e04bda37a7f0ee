/**
 * This process as one rank of an MPI job (--enable-mpi): the library
 * opened, clocks compared, and the coordinator the levels measure with.
 */
import type { Part } from "../load/split.ts";
import type { ShardFigures } from "./merge.ts";
import type { Communicator } from "./communicator.ts";
import { clockOffsets, MpiCoordinator } from "./coordinator.ts";
import { openMpi } from "./ffi.ts";

export class MpiSession {
  readonly coordinator: MpiCoordinator;
  /** Each rank's wall clock minus rank 0's, milliseconds, read at start. */
  readonly offsetsMs: readonly number[];

  /** `onStable`: see MpiCoordinator. */
  static async open(
    options: { library?: string; shard: boolean; onStable?: () => void },
  ): Promise<MpiSession> {
    const comm = openMpi(options.library === undefined ? {} : { library: options.library });
    return new MpiSession(new MpiCoordinator(comm, options), await clockOffsets(comm));
  }

  constructor(coordinator: MpiCoordinator, offsetsMs: readonly number[]) {
    this.coordinator = coordinator;
    this.offsetsMs = offsetsMs;
  }

  get comm(): Communicator {
    return this.coordinator.comm;
  }

  /** --shard: this rank's part of the load. */
  get part(): Part | undefined {
    const { rank, size } = this.comm;
    return this.coordinator.shard ? { index: rank, count: size } : undefined;
  }

  /** This rank writes reports: every rank coordinated, rank 0 alone sharded. */
  get reports(): boolean {
    return !this.coordinator.shard || this.comm.rank === 0;
  }

  /** What the job is, for the top of the report. */
  describe(): string {
    const { rank, size, library } = this.comm;
    const mode = this.coordinator.shard
      ? `one load sharded across ${size} ranks, reported by rank 0`
      : `rank ${rank} of ${size}, levels and windows coordinated`;
    return `MPI: ${mode} (${library.split(",")[0]})`;
  }

  /** Verbose: each rank's clock offset to rank 0. */
  describeClocks(): string {
    const offsets = this.offsetsMs.map((ms, rank) =>
      `rank ${rank} ${ms >= 0 ? "+" : ""}${ms.toFixed(3)} ms`
    );
    return `MPI clock offsets to rank 0: ${offsets.join(", ")}`;
  }

  /** --shard: each rank's figures over a level's reported windows (ShardFigures per window). */
  describeShards(shards: readonly ShardFigures[][]): string {
    return formatShards(shards);
  }

  /**
   * --shard --profile-export-file: each rank's export (`path`: rank 0's
   * final file, the others' own temporary one) travels to rank 0, which adds
   * the other ranks' requests to its file. A collective: every rank calls it.
   */
  async gatherExports(path: string): Promise<void> {
    const gathered = await this.comm.gather(Deno.readFileSync(path));
    if (this.comm.rank !== 0) {
      Deno.removeSync(path);
      return;
    }
    const { addShardRequests, parseExact } = await import("../report/merge.ts");
    const { writeFileAtomic } = await import("../report/output_file.ts");
    const decoder = new TextDecoder();
    const [own, ...others] = gathered!.map((bytes) => parseExact(decoder.decode(bytes)));
    writeFileAtomic(path, `${JSON.stringify(addShardRequests(own, others))}\n`);
  }

  /** The clean end of a run: the other ranks stop their sweeps, then MPI ends. */
  async close(): Promise<void> {
    await this.coordinator.end();
    this.comm.finalize();
  }
}

/** --shard: one line per rank of a level's send figures, so that a lagging shard shows. */
function formatShards(shards: readonly ShardFigures[][]): string {
  const ranks = shards[0]?.length ?? 0;
  const lines: string[] = [];
  for (let rank = 0; rank < ranks; rank++) {
    const mine = shards.map((window) => window[rank]);
    const requests = mine.reduce((n, s) => n + s.requestCount, 0);
    const seconds = mine.reduce((n, s) => n + s.durationMs, 0) / 1000;
    const sends = mine.reduce((n, s) => n + s.sendCount, 0);
    const lag = sends > 0
      ? `, send lag p50 ${Math.round(Math.max(...mine.map((s) => s.sendLagP50Us)))} usec, ` +
        `p99 ${Math.round(Math.max(...mine.map((s) => s.sendLagP99Us)))} usec, ` +
        `max ${Math.round(Math.max(...mine.map((s) => s.sendLagMaxUs)))} usec`
      : "";
    lines.push(
      `  Rank ${rank}: ${(seconds > 0 ? requests / seconds : 0).toFixed(2)} infer/sec${lag}`,
    );
  }
  return `  Per rank (--shard):\n${lines.join("\n")}\n`;
}
