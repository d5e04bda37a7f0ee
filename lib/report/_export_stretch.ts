/**
 * The profile export's records of one stretch between two window ends of
 * the recorder, held until a reported window claims them (then serialized
 * as they are written) or none does.
 *
 * Held compact: numbers in typed arrays, outside the JS heap and reused
 * from stretch to stretch, and JSON shared between records (their inputs,
 * equal outputs). As text a window's records took 15 MB at 5,000 req/s (and
 * several times that as the strings' objects); in JS arrays grown by push,
 * V8 sized its heap to them and their dropped copies (10 MB more).
 */
import { GrowableArray, SampleList } from "../measure/samples.ts";
import { type RequestFacts, wallClockText } from "./_export_json.ts";
import type { OutputTensors } from "../protocol/types.ts";

const indexes = () => new GrowableArray((n) => new Uint32Array(n));

export class Stretch {
  /** When the recorder ended it (performance.now()): a reported window ends then, or none does. */
  endMs = NaN;
  // One value per record of a valid request.
  readonly start = new SampleList();
  /** NaN: not an open-loop request. */
  readonly intended = new SampleList();
  /** Indexes into `facts` and `tokens`. */
  readonly factsAt = indexes();
  readonly tokensAt = indexes();
  /** Responses per record; their times (and outputs) follow each other in `responsesMs`. */
  readonly responseCounts = indexes();
  // One value per response.
  readonly responsesMs = new SampleList();
  /** Indexes into `outputs`. */
  readonly outputsAt = indexes();
  readonly facts: RequestFacts[] = [];
  /** The token fields of records' JSON; the first, "", for all that are not token streams. */
  readonly tokens: string[] = [""];
  /** JSON objects of outputs; the first, `{}`, for responses without. */
  readonly outputs: string[] = ["{}"];
  /** The outputs and facts last added, where they are: the same repeat from request to request. */
  lastOutputs: OutputTensors | undefined;
  lastOutputsAt = 0;
  lastFacts: RequestFacts | undefined;
  lastFactsAt = 0;
  /** Records of failed requests (few: a failing server fails the level). */
  readonly failed: string[] = [];

  get count(): number {
    return this.start.length;
  }

  /** Empty again, keeping the typed arrays' storage. */
  reset(): void {
    this.endMs = NaN;
    for (
      const column of [
        this.start,
        this.intended,
        this.factsAt,
        this.tokensAt,
        this.responseCounts,
        this.responsesMs,
        this.outputsAt,
      ]
    ) column.length = 0;
    this.facts.length = 0;
    this.tokens.length = 1;
    this.outputs.length = 1;
    this.lastOutputs = undefined;
    this.lastFacts = undefined;
    this.failed.length = 0;
  }

  /** The JSON of record `i`, whose responses start at `first`. */
  json(i: number, first: number): string {
    const start = this.start.data;
    const times = this.responsesMs.data;
    const outputsAt = this.outputsAt.data;
    const count = this.responseCounts.data[i];
    let timesJson = "";
    let outputsJson = "";
    for (let r = first; r < first + count; r++) {
      const comma = r > first ? "," : "";
      timesJson += `${comma}${wallClockText(times[r])}`;
      outputsJson += `${comma}${this.outputs[outputsAt[r]]}`;
    }
    const facts = this.facts[this.factsAt.data[i]];
    return `${headJson(start[i], facts)},"response_timestamps":[${timesJson}],` +
      `"response_outputs":[${outputsJson}]${this.tokens[this.tokensAt.data[i]]}` +
      tailJson(this.intended.data[i]);
  }
}

/** `{"timestamp":...,"sequence_id":...,"request_inputs":...` of a record. */
export function headJson(startMs: number, facts: RequestFacts): string {
  let json = `{"timestamp":${wallClockText(startMs)}`;
  if (facts.sequenceId !== 0n) json += `,"sequence_id":${facts.sequenceId}`;
  return `${json},"request_inputs":${facts.inputsJson}`;
}

/** `,"intended_timestamp":...}`: the end of a record (NaN: not an open-loop request). */
export function tailJson(intendedMs: number): string {
  return Number.isNaN(intendedMs) ? "}" : `,"intended_timestamp":${wallClockText(intendedMs)}}`;
}
