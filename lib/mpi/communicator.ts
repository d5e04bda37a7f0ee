/**
 * What inferperf needs from MPI (--enable-mpi): the ranks of one job, a
 * barrier, and collectives over bytes and doubles rooted at rank 0. The
 * library binding (ffi.ts) and the in-process group of the unit tests
 * (local.ts) implement it.
 */

export type ReduceOp = "sum" | "min" | "max";

export interface Communicator {
  readonly rank: number;
  readonly size: number;
  /** The MPI library's own description, e.g. "Open MPI v4.1.4, ...". */
  readonly library: string;
  /** Resolves once every rank has called it. */
  barrier(): Promise<void>;
  /** Rank 0's `bytes` on every rank (the other ranks' argument is ignored). */
  broadcast(bytes: Uint8Array | undefined): Promise<Uint8Array>;
  /** The element-wise reduction of every rank's `values`, on every rank. */
  allreduce(values: Float64Array, op: ReduceOp): Promise<Float64Array>;
  /** Rank 0: every rank's `bytes` in rank order; the other ranks: undefined. */
  gather(bytes: Uint8Array): Promise<Uint8Array[] | undefined>;
  /** Ends MPI for this process: after it, no collective may run. */
  finalize(): void;
}

/** The only root inferperf uses: rank 0 decides and reports. */
export const ROOT = 0;

/** Every rank's bytes on every rank: a gather to rank 0, then its broadcast. */
export async function allGather(comm: Communicator, bytes: Uint8Array): Promise<Uint8Array[]> {
  const gathered = await comm.gather(bytes);
  const packed = await comm.broadcast(gathered && packFrames(gathered));
  return unpackFrames(packed);
}

/** Byte strings framed by their lengths (32-bit little endian), for one broadcast. */
export function packFrames(frames: readonly Uint8Array[]): Uint8Array {
  const total = frames.reduce((sum, f) => sum + 4 + f.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const frame of frames) {
    view.setUint32(at, frame.length, true);
    out.set(frame, at + 4);
    at += 4 + frame.length;
  }
  return out;
}

export function unpackFrames(bytes: Uint8Array): Uint8Array[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const frames: Uint8Array[] = [];
  for (let at = 0; at < bytes.length;) {
    const length = view.getUint32(at, true);
    frames.push(bytes.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return frames;
}
