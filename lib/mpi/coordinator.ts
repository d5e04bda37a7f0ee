/**
 * The ranks of an MPI job measuring together (--enable-mpi).
 *
 * Coordinated (perf_analyzer's): each rank profiles its own model, server or
 * options; levels start together, windows end on the same grid, and a level
 * ends when every rank is stable at the same window.
 *
 * Sharded (--shard): the ranks send parts of one load; after each window
 * rank 0 gathers every rank's window, merges them and broadcasts the merged
 * one, so that every rank judges stability and walks the sweep on the same
 * data, and rank 0 reports it.
 *
 * A sweep ends for all ranks when it ends for one: each level begins with an
 * allreduce of "my sweep is over", which a finished rank joins once (end()).
 */
import { type LevelCoordinator, SweepEndedError, type Verdict } from "../measure/level.ts";
import type { WindowData } from "../types/results.ts";
import { allGather, type Communicator, ROOT } from "./communicator.ts";
import { mergeWindows } from "./merge.ts";
import { decodeWindow, encodeWindow } from "./window_codec.ts";

export class MpiCoordinator implements LevelCoordinator {
  readonly comm: Communicator;
  readonly shard: boolean;
  readonly #onStable: (() => void) | undefined;
  #ended = false;

  /** `onStable` runs on this rank each time the ranks agree that all of them are stable. */
  constructor(comm: Communicator, options: { shard: boolean; onStable?: () => void }) {
    this.comm = comm;
    this.shard = options.shard;
    this.#onStable = options.onStable;
  }

  async begin(): Promise<void> {
    if (this.#ended) throw new SweepEndedError();
    const [over] = await this.comm.allreduce(new Float64Array([0]), "max");
    if (over > 0) {
      this.#ended = true;
      throw new SweepEndedError();
    }
  }

  ready(): Promise<void> {
    return this.comm.barrier();
  }

  /** Sharded, rank 0's server statistics count every rank's requests; others measure their own. */
  drained(): Promise<void> {
    return this.shard ? this.comm.barrier() : Promise.resolve();
  }

  async window(own: WindowData): Promise<WindowData> {
    if (!this.shard) return own;
    const gathered = await this.comm.gather(encodeWindow(own));
    const merged = gathered && encodeWindow(
      mergeWindows(gathered.map((bytes) => decodeWindow(bytes, own.endMs))),
    );
    return decodeWindow(await this.comm.broadcast(merged), own.endMs);
  }

  async agree(verdict: Verdict): Promise<Verdict> {
    const [unstable, stop] = await this.comm.allreduce(
      new Float64Array([verdict.stable ? 0 : 1, verdict.stop ? 1 : 0]),
      "max",
    );
    if (unstable === 0) this.#onStable?.();
    return { stable: unstable === 0, stop: stop > 0 };
  }

  /** This rank's sweep is over: the ranks still measuring stop before their next level. */
  async end(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    await this.comm.allreduce(new Float64Array([1]), "max");
  }
}

/**
 * Each rank's wall clock minus rank 0's, in milliseconds, read as the ranks
 * leave a barrier together (within the barrier's skew, microseconds on one
 * host): the offsets to keep in mind when comparing ranks' exports.
 */
export async function clockOffsets(comm: Communicator): Promise<number[]> {
  await comm.barrier();
  const now = new Float64Array([performance.timeOrigin + performance.now()]);
  const all = await allGather(comm, new Uint8Array(now.buffer));
  const walls = all.map((bytes) =>
    new DataView(bytes.buffer, bytes.byteOffset).getFloat64(0, true)
  );
  return walls.map((wall) => wall - walls[ROOT]);
}
