/** `--help` text, generated from the option table. */
import { GROUPS, type OptionDef, OPTIONS } from "./options.ts";

const USAGE = `Usage:
  inferperf -m MODEL [options]            profile a model (perf_analyzer compatible)
  inferperf serve [--models FILE] [...]   run the reference KServe v2 server
  inferperf demo [options]                profile the built-in reference server
  inferperf profile --config sweep.yaml   sweep models x [sweep] options, with checkpoints
  inferperf report [options]              summary and CSV of a sweep's checkpoints
  inferperf merge -o OUT.json RUN.json... one run from runs made side by side (summaries or exports)
  inferperf compare BASE.json NEW.json    is NEW better, worse, or no different (summary JSONs)
  inferperf input-template -m MODEL       an input-data JSON for the model, from its metadata

Measures throughput and latency of an inference server. Each load level is
measured in windows until three consecutive windows agree within
--stability-percentage.`;

function signature(def: OptionDef): string {
  const names = def.short ? `-${def.short}, --${def.name}` : `    --${def.name}`;
  if (def.type === "boolean" || def.type === "count") return names;
  const value = def.valueName ??
    (def.choices
      ? def.choices.join("|")
      : def.type === "int" || def.type === "float"
      ? "N"
      : "VALUE");
  return `${names} ${value}`;
}

function describe(def: OptionDef): string {
  let text = def.help;
  if (def.default !== undefined && def.type !== "boolean") text += ` [default: ${def.default}]`;
  if (def.sweep) text += " [sweep]";
  if (def.aliases) text += ` [also ${def.aliases.map((a) => `--${a}`).join(", ")}]`;
  return text;
}

/** Wraps `text` to `width` columns, indenting continuation lines by `indent`. */
function wrap(text: string, options: { width: number; indent: number }): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > options.width - options.indent) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join("\n" + " ".repeat(options.indent));
}

export function formatHelp(options: readonly OptionDef[] = OPTIONS): string {
  const sections = [USAGE];
  const column = 38;
  for (const group of GROUPS) {
    const defs = options.filter((o) => o.group === group);
    if (defs.length === 0) continue;
    const rows = defs.map((d) => {
      const left = `  ${signature(d)}`;
      const pad = left.length + 2 > column
        ? `\n${" ".repeat(column)}`
        : " ".repeat(column - left.length);
      return left + pad + wrap(describe(d), { width: 100, indent: column });
    });
    sections.push(`${group}:\n${rows.join("\n")}`);
  }
  return sections.join("\n\n") + "\n";
}
