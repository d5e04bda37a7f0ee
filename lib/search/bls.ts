/**
 * Model Analyzer's BLS search (`bls_composing_models`): a BLS model calls its
 * composing models by their own names, so each of its variants is its own
 * configuration (instance count, and max batch size where it batches) with a
 * configuration of each composing model, all loaded under their models' own
 * names. Quick search climbs them (ensemble_quick.ts) and Optuna samples them
 * (optuna.ts), the BLS model's coordinates first, then each composing model's.
 */
import type { ModelConfig } from "../protocol/model_config.ts";
import type { RawOptions } from "../cli/options.ts";
import { type BruteRanges, bruteVariants, expand, overlay, type Variant } from "./variants.ts";

type Plain = string | number | boolean | null | Plain[] | { [key: string]: Plain };

const isMapping = (v: Plain | undefined): v is { [key: string]: Plain } =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A composing model of bls_composing_models with its model_config_parameters. */
export interface BlsComposing {
  name: string;
  /** instance_group's count list: the instance counts searched (else the search's range). */
  instanceCounts?: number[];
  /** instance_group's kind. */
  kind?: string;
  /** The other model_config_parameters, one value each: set in every variant. */
  fixed?: { [key: string]: Plain };
}

/** The first list in nested lists (Model Analyzer wraps values in lists for its sweeps). */
function unwrap(value: Plain | undefined): Plain | undefined {
  let v = value;
  while (Array.isArray(v) && v.length === 1 && Array.isArray(v[0])) v = v[0];
  return Array.isArray(v) && v.length === 1 && isMapping(v[0]!) ? v[0] : v;
}

function composingOf(name: string, settings: Plain, errors: string[]): BlsComposing {
  const where = ` (bls_composing_models: ${name})`;
  if (settings === null) return { name };
  if (!isMapping(settings) || Object.keys(settings).some((k) => k !== "model_config_parameters")) {
    errors.push(`Invalid settings${where}: expected model_config_parameters only`);
    return { name };
  }
  const parameters = settings.model_config_parameters ?? {};
  if (!isMapping(parameters)) {
    errors.push(`Invalid model_config_parameters${where}: expected a mapping of config fields`);
    return { name };
  }
  // As Model Analyzer's quick search: max_batch_size is always a searched coordinate.
  const { instance_group: group, max_batch_size: _, ...fixed } = parameters;
  const composing: BlsComposing = { name };
  const first = unwrap(group);
  if (group !== undefined) {
    if (!isMapping(first ?? null)) {
      errors.push(`Invalid instance_group${where}: expected one group with count and kind`);
      return composing;
    }
    const { count, kind } = first as { [key: string]: Plain };
    const counts = count === undefined ? [] : [count].flat(2);
    if (counts.some((c) => !Number.isInteger(c) || (c as number) < 1)) {
      errors.push(`Invalid instance_group count${where}: expected integers >= 1`);
    } else if (counts.length > 0) {
      composing.instanceCounts = [...new Set(counts as number[])].sort((a, b) => a - b);
    }
    const kinds = kind === undefined ? [] : [kind].flat(2);
    if (kinds.length > 1) errors.push(`Invalid instance_group kind${where}: expected one kind`);
    else if (kinds.length === 1) composing.kind = String(kinds[0]);
  }
  if (Object.keys(fixed).length > 0) {
    if (expand(fixed).length > 1) {
      errors.push(
        `Composing model "${name}" has more than one combination of model_config_parameters besides instance_group and max_batch_size: quick search sets one`,
      );
    } else composing.fixed = expand(fixed)[0] as { [key: string]: Plain };
  }
  return composing;
}

/**
 * bls_composing_models (--bls-composing-models): names (a list or a comma
 * string), or Model Analyzer's mappings with model_config_parameters;
 * undefined where not given.
 */
export function parseBlsComposing(raw: RawOptions, errors: string[]): BlsComposing[] | undefined {
  const given = raw.get("bls-composing-models");
  if (given === undefined) return undefined;
  const items = Array.isArray(given) ? given : [String(given)];
  let entries: Array<[string, Plain]>;
  if (items.length === 1 && /^\s*[[{]/.test(items[0]!)) {
    const parsed = JSON.parse(items[0]!) as Plain;
    entries = (Array.isArray(parsed) ? parsed : [parsed]).flatMap((item): Array<[string, Plain]> =>
      isMapping(item) ? Object.entries(item) : [[String(item), null]]
    );
  } else {
    entries = items.flatMap((s) => s.split(",")).map((s) => s.trim()).filter((s) => s !== "")
      .map((name) => [name, null]);
  }
  return entries.map(([name, settings]) => composingOf(name, settings, errors));
}

/** Model Analyzer's refusals of a BLS search, as it words them (one line each). */
export function checkBls(
  options: { searchMode?: string; models: number; concurrent: boolean },
): string[] {
  const errors: string[] = [];
  if (options.searchMode === "brute") {
    errors.push(
      "Profiling of models in brute search mode is not supported for BLS models. Please use quick search mode.",
    );
  }
  if (options.models > 1) {
    errors.push("Profiling of multiple models is not supported for BLS models.");
  }
  if (options.concurrent) {
    errors.push(
      "Profiling models concurrently is not supported for BLS models. Please remove `--run-config-profile-models-concurrently-enable from the config/CLI.",
    );
  }
  return errors;
}

/** A composing model's searched variants: its configuration with its parameters, over its ranges. */
export function composingVariants(
  composing: BlsComposing,
  options: { base: ModelConfig; ranges: BruteRanges },
): Variant[] {
  let base = composing.fixed ? overlay(options.base, composing.fixed) as ModelConfig : options.base;
  if (composing.kind) {
    base = { ...base, instance_group: [{ ...base.instance_group?.[0], kind: composing.kind }] };
  }
  return bruteVariants(composing.name, base, {
    ...options.ranges,
    ...(composing.instanceCounts ? { instanceCounts: composing.instanceCounts } : {}),
  });
}

/**
 * A BLS model's search: its own configuration with its composing models'
 * own, then one variant per combination of its own searched variants and its
 * composing models' (in bls_composing_models order).
 */
export function blsVariants(
  own: readonly Variant[],
  composing: ReadonlyArray<readonly Variant[]>,
): Variant[] {
  const combinations = composing.reduce<Variant[][]>(
    (done, variants) => done.flatMap((members) => variants.slice(1).map((v) => [...members, v])),
    [[]],
  );
  const searched = own.slice(1).flatMap((v) => combinations.map((members) => ({ v, members })));
  return [{ v: own[0]!, members: composing.map((c) => c[0]!) }, ...searched].map(
    ({ v, members }, i) => {
      const name = `${v.model}_config_${i === 0 ? "default" : i - 1}`;
      return { ...v, name, config: { ...v.config, name }, composing: members, bls: true };
    },
  );
}
