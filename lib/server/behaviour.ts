/** What a simulated model computes: real outputs, so clients can validate them. */
import type { ParameterValue, Tensor } from "../types/tensor.ts";
import { type Datatype, elementCount, elementSize } from "../types/datatype.ts";
import type { ModelSpec } from "./config.ts";

/** What a stateful behaviour keeps for one live sequence between its requests. */
export interface SequenceState {
  value: Uint8Array | undefined;
}

/**
 * Computes the outputs of one request. `inputs` are in model order (validated),
 * `outputs` are indexes into the model's outputs; sequence models get the
 * state of the request's sequence.
 */
export type Behaviour = (
  inputs: readonly Tensor[],
  outputs: readonly number[],
  sequence?: SequenceState,
) => Tensor[];

type NumberArray =
  | Int8Array
  | Int16Array
  | Int32Array
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | Float32Array
  | Float64Array;
type BigIntArray = BigInt64Array | BigUint64Array;
interface ArrayType<T> {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
  new (length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

const NUMBER_ARRAYS: Partial<Record<Datatype, ArrayType<NumberArray>>> = {
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  FP32: Float32Array,
  FP64: Float64Array,
};
const BIGINT_ARRAYS: Partial<Record<Datatype, ArrayType<BigIntArray>>> = {
  INT64: BigInt64Array,
  UINT64: BigUint64Array,
};

/**
 * Aligned copies of tensor bytes that a typed array cannot view in place,
 * reused from request to request (tensors arrive at any offset of a message).
 */
class Scratch {
  #bytes = new Uint8Array(64);

  /** A typed view of `data`: in place when aligned, else in this scratch (valid until its next use). */
  view<T>(type: ArrayType<T>, data: Uint8Array): T {
    let bytes = data;
    if (data.byteOffset % type.BYTES_PER_ELEMENT !== 0) {
      if (this.#bytes.byteLength < data.byteLength) this.#bytes = new Uint8Array(data.byteLength);
      bytes = this.#bytes.subarray(0, data.byteLength);
      bytes.set(data);
    }
    return new type(bytes.buffer, bytes.byteOffset, bytes.byteLength / type.BYTES_PER_ELEMENT);
  }
}

function bytesOf(array: NumberArray | BigIntArray): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

function addSub(spec: ModelSpec): Behaviour {
  const datatype = spec.inputs[0].datatype;
  const numbers = NUMBER_ARRAYS[datatype];
  const bigints = BIGINT_ARRAYS[datatype];
  const names = spec.outputs.map((o) => o.name);
  const [first, second] = [new Scratch(), new Scratch()];
  // Assignment to a typed array wraps like C integer arithmetic, as Triton's simple model does.
  const compute = numbers !== undefined
    ? (a: Uint8Array, b: Uint8Array, add: boolean): Uint8Array => {
      const x = first.view(numbers, a);
      const y = second.view(numbers, b);
      const out = new numbers(x.length);
      if (add) { for (let i = 0; i < x.length; i++) out[i] = x[i] + y[i]; }
      else for (let i = 0; i < x.length; i++) out[i] = x[i] - y[i];
      return bytesOf(out);
    }
    : (a: Uint8Array, b: Uint8Array, add: boolean): Uint8Array => {
      const x = first.view(bigints!, a);
      const y = second.view(bigints!, b);
      const out = new bigints!(x.length);
      if (add) { for (let i = 0; i < x.length; i++) out[i] = x[i] + y[i]; }
      else for (let i = 0; i < x.length; i++) out[i] = x[i] - y[i];
      return bytesOf(out);
    };
  return (inputs, outputs) =>
    outputs.map((o) => ({
      name: names[o],
      datatype,
      shape: inputs[0].shape,
      data: compute(inputs[0].data, inputs[1].data, o === 0),
    }));
}

/**
 * Running element-wise sum over a sequence. A request whose tensor size
 * differs from the sum's (another batch size) restarts the sum.
 */
function accumulate(spec: ModelSpec): Behaviour {
  const { datatype } = spec.inputs[0];
  const numbers = NUMBER_ARRAYS[datatype];
  const bigints = BIGINT_ARRAYS[datatype];
  const name = spec.outputs[0].name;
  const scratch = new Scratch();
  return (inputs, outputs, sequence) => {
    const input = inputs[0];
    const state = sequence ?? { value: undefined };
    const size = input.data.byteLength;
    // Its own buffer, so always viewed in place.
    const sum = state.value?.byteLength === size ? state.value : new Uint8Array(size);
    if (numbers !== undefined) {
      const x = scratch.view(numbers, input.data);
      const total = new numbers(sum.buffer, 0, x.length);
      for (let i = 0; i < x.length; i++) total[i] += x[i];
    } else {
      const x = scratch.view(bigints!, input.data);
      const total = new bigints!(sum.buffer, 0, x.length);
      for (let i = 0; i < x.length; i++) total[i] += x[i];
    }
    state.value = sum;
    return outputs.map(() => ({ name, datatype, shape: input.shape, data: sum.slice() }));
  };
}

function identity(spec: ModelSpec): Behaviour {
  return (inputs, outputs) =>
    outputs.map((o) => ({
      name: spec.outputs[o].name,
      datatype: spec.outputs[o].datatype,
      shape: inputs[o].shape,
      data: inputs[o].data,
    }));
}

function zeros(spec: ModelSpec): Behaviour {
  const batched = spec.maxBatchSize > 0 ? 1 : 0;
  const last = spec.inputs.length - 1;
  return (inputs, outputs) =>
    outputs.map((o) => {
      const output = spec.outputs[o];
      const source = inputs[Math.min(o, last)].shape;
      const shape = output.dims.map((d, i) => d === -1 ? source[i + batched] : d);
      if (batched) shape.unshift(source[0]);
      // BYTES elements of length 0 are all-zero 4-byte length prefixes.
      const size = elementSize(output.datatype) || 4;
      return {
        name: output.name,
        datatype: output.datatype,
        shape,
        data: new Uint8Array(size * elementCount(shape)),
      };
    });
}

export function createBehaviour(spec: ModelSpec): Behaviour {
  switch (spec.kind) {
    case "add_sub":
      return addSub(spec);
    case "identity":
      return identity(spec);
    case "zeros":
      return zeros(spec);
    case "accumulate":
      return accumulate(spec);
    case "bls":
      // Its outputs are its calls' (model.ts).
      return () => [];
  }
}

/**
 * What Triton's identity backend attaches to every response, to show off
 * response parameters. Clients must read past them: a stream reader that
 * could not failed every streamed response of the real server.
 */
const IDENTITY_PARAMETERS: Readonly<Record<string, ParameterValue>> = {
  param0: "an example string parameter",
  param1: 42,
  param2: false,
  param3: 123.123,
};

/** The parameters a model's responses carry, if any. */
export function responseParameters(
  spec: ModelSpec,
): Readonly<Record<string, ParameterValue>> | undefined {
  return spec.kind === "identity" ? IDENTITY_PARAMETERS : undefined;
}
