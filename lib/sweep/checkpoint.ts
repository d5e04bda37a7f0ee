/**
 * Sweep checkpoints, as Model Analyzer keeps them (seed 003): files 0.ckpt,
 * 1.ckpt, ... in one directory. At start the highest index is loaded; a run
 * that adds measurements writes the next index (rewritten after every point,
 * so at most the running point is lost) and never deletes older files.
 * Writes are synchronous so that a third Ctrl-C can still save.
 */
import { optionLabel, OPTIONS } from "../cli/options.ts";
import { resultReplacer, resultReviver } from "../report/result_json.ts";
import type { LevelResult } from "../types/results.ts";
import { pointKey, type Settings, type SweepPoint } from "./config.ts";

/** A checkpoint that can not be used: unreadable, corrupt or from other settings. */
export class CheckpointError extends Error {
  override name = "CheckpointError";
  constructor(message: string, readonly file: string) {
    super(message);
  }
}

/** A measured point. Its result keeps no windows (checkpoints hold summaries). */
export interface PointRecord {
  point: SweepPoint;
  result: LevelResult;
  /** Wall-clock time of the measurement, ISO 8601. */
  measuredAt: string;
}

/** The objective and constraints of the sweep that wrote a checkpoint, as option text. */
export interface StoredGoals {
  objective: string;
  constraints: string[];
}

const FORMAT = "inferperf sweep checkpoint";
const VERSION = 1;
const NAME = /^(0|[1-9]\d*)\.ckpt$/;

interface CheckpointFile {
  format: typeof FORMAT;
  version: number;
  settings: Settings;
  goals: StoredGoals;
  points: PointRecord[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const CLIENT_NUMBERS = [
  "requestCount",
  "responseCount",
  "errorCount",
  "durationMs",
  "throughput",
  "avgLatencyUs",
  "stdLatencyUs",
  "avgSendUs",
  "avgRecvUs",
  "avgWaitUs",
] as const;

/** What is wrong with a stored point, or undefined when it can be used. */
function recordProblem(r: unknown): string | undefined {
  if (!isObject(r) || !isObject(r.point) || !isObject(r.result)) return "not a point record";
  const p = r.point;
  if (
    typeof p.model !== "string" || typeof p.batchSize !== "number" ||
    typeof p.protocol !== "string" || typeof p.inputData !== "string" ||
    typeof p.mode !== "string" || typeof p.value !== "number"
  ) return "a point lacks model, batchSize, protocol, inputData, mode or value";
  const result = r.result;
  const client = result.client;
  if (!isObject(client) || typeof result.stable !== "boolean") return "a result lacks its summary";
  const missing = CLIENT_NUMBERS.find((k) => typeof client[k] !== "number");
  if (missing) return `a result lacks client.${missing}`;
  if (!(client.percentilesUs instanceof Map)) return "a result lacks client.percentilesUs";
  if (result.server !== undefined && !Array.isArray(result.server)) {
    return "a result has bad server data";
  }
  if (typeof r.measuredAt !== "string") return "a point lacks measuredAt";
  return undefined;
}

function parseCheckpoint(text: string): CheckpointFile | string {
  let data: unknown;
  try {
    data = JSON.parse(text, resultReviver);
  } catch (e) {
    return (e as Error).message;
  }
  if (!isObject(data) || data.format !== FORMAT) return "not an inferperf sweep checkpoint";
  if (data.version !== VERSION) {
    return `format version ${data.version} (this inferperf reads version ${VERSION})`;
  }
  if (!isObject(data.settings) || !isObject(data.goals) || !Array.isArray(data.points)) {
    return "settings, goals or points are missing";
  }
  for (const record of data.points) {
    const problem = recordProblem(record);
    if (problem) return problem;
    (record as PointRecord).result.windows = [];
  }
  return data as unknown as CheckpointFile;
}

/** A setting's option label; a checkpoint may name options this version no longer has. */
function settingLabel(name: string): string {
  return OPTIONS.some((o) => o.name === name) ? optionLabel(name) : `--${name}`;
}

function describeSetting(value: Settings[string]): string {
  if (value === null) return "not set";
  if (Array.isArray(value)) {
    return value.length === 0 ? "none" : value.map((v) => `"${v}"`).join(", ");
  }
  return typeof value === "string" ? `"${value}"` : String(value);
}

export class CheckpointStore {
  readonly directory: string;
  /** The checkpoint loaded at start; undefined for a fresh sweep. */
  readonly loaded?: string;
  /** Settings and goals of the loaded checkpoint. */
  readonly storedSettings?: Settings;
  readonly storedGoals?: StoredGoals;
  readonly #records = new Map<string, PointRecord>();
  readonly #index: number;
  #settings: Settings = {};
  #goals: StoredGoals = { objective: "throughput", constraints: [] };
  #dirty = false;
  #saved = false;

  private constructor(
    directory: string,
    latest?: { file: string; index: number; data: CheckpointFile },
  ) {
    this.directory = directory;
    this.#index = latest ? latest.index + 1 : 0;
    if (!latest) return;
    this.loaded = latest.file;
    this.storedSettings = latest.data.settings;
    this.storedGoals = latest.data.goals;
    this.#settings = latest.data.settings;
    this.#goals = latest.data.goals;
    for (const record of latest.data.points) this.#records.set(pointKey(record.point), record);
  }

  /** Loads the latest checkpoint of `directory`, if any; throws CheckpointError naming the file. */
  static open(directory: string): CheckpointStore {
    let latest: { name: string; index: number } | undefined;
    try {
      for (const entry of Deno.readDirSync(directory)) {
        const match = NAME.exec(entry.name);
        if (match && (!latest || Number(match[1]) > latest.index)) {
          latest = { name: entry.name, index: Number(match[1]) };
        }
      }
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return new CheckpointStore(directory);
      throw new CheckpointError(
        `Can not read the checkpoint directory "${directory}": ${(e as Error).message}`,
        directory,
      );
    }
    if (!latest) return new CheckpointStore(directory);
    const file = `${directory.replace(/\/+$/, "")}/${latest.name}`;
    let text: string;
    try {
      text = Deno.readTextFileSync(file);
    } catch (e) {
      throw new CheckpointError(`Can not read checkpoint "${file}": ${(e as Error).message}`, file);
    }
    const data = parseCheckpoint(text);
    if (typeof data === "string") {
      const previous = latest.index > 0
        ? `; move it away to resume from ${latest.index - 1}.ckpt,`
        : ";";
      throw new CheckpointError(
        `Checkpoint "${file}" is corrupt (${data})${previous} or use another --checkpoint-directory to start afresh`,
        file,
      );
    }
    return new CheckpointStore(directory, { file, index: latest.index, data });
  }

  /** Measured points by pointKey. */
  get records(): ReadonlyMap<string, PointRecord> {
    return this.#records;
  }

  /** The file the next save writes. */
  get file(): string {
    return `${this.directory.replace(/\/+$/, "")}/${this.#index}.ckpt`;
  }

  /** The newest checkpoint on disk: this run's once it saved, else the loaded one. */
  get latest(): string | undefined {
    return this.#saved ? this.file : this.loaded;
  }

  /**
   * Adopts the settings and goals of the sweep about to run. Throws
   * CheckpointError when the loaded checkpoint was measured with other
   * settings, naming each difference (`describe` words one setting's
   * difference itself, e.g. one field of a file rather than the file).
   */
  use(
    settings: Settings,
    goals: StoredGoals,
    options: { describe?: Record<string, (stored: unknown, now: unknown) => string> } = {},
  ): void {
    if (this.loaded && this.storedSettings) {
      const stored = this.storedSettings;
      const names = [...new Set([...Object.keys(stored), ...Object.keys(settings)])];
      const differences = names
        .filter((name) => JSON.stringify(stored[name]) !== JSON.stringify(settings[name]))
        .map((name) =>
          options.describe?.[name]?.(stored[name], settings[name]) ??
            `${settingLabel(name)} ${describeSetting(stored[name] ?? null)} (now ${
              describeSetting(settings[name] ?? null)
            })`
        );
      if (differences.length > 0) {
        throw new CheckpointError(
          `Checkpoint "${this.loaded}" was measured with other settings: ${
            differences.join(", ")
          }. Its points can not be mixed with new ones: use the same settings, or another --checkpoint-directory (or remove "${this.directory}") to start afresh`,
          this.loaded,
        );
      }
    }
    this.#settings = settings;
    this.#goals = goals;
  }

  add(record: PointRecord): void {
    this.#records.set(pointKey(record.point), record);
    this.#dirty = true;
  }

  /** Writes the checkpoint if points were added since the last save; returns the file written. */
  save(): string | undefined {
    if (!this.#dirty) return undefined;
    const file = this.file;
    const data: CheckpointFile = {
      format: FORMAT,
      version: VERSION,
      settings: this.#settings,
      goals: this.#goals,
      points: [...this.#records.values()].map((r) => ({
        ...r,
        result: { ...r.result, windows: [] },
      })),
    };
    try {
      Deno.mkdirSync(this.directory, { recursive: true });
      // Written aside, then renamed: an interrupted write never leaves a corrupt latest checkpoint.
      Deno.writeTextFileSync(`${file}.tmp`, JSON.stringify(data, resultReplacer));
      Deno.renameSync(`${file}.tmp`, file);
    } catch (e) {
      throw new CheckpointError(
        `Can not write checkpoint "${file}": ${(e as Error).message}`,
        file,
      );
    }
    this.#dirty = false;
    this.#saved = true;
    return file;
  }
}
