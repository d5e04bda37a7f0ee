/**
 * Writes the facts of perf_analyzer's command-line parser that
 * lib/cli/perf_analyzer_options_test.ts checks inferperf against: its
 * getopt_long table (long names and whether each takes a value) and its
 * short-option string, from src/command_line_parser.cc.
 *
 *   git -C PERF_ANALYZER show COMMIT:src/command_line_parser.cc > parser.cc
 *   deno run --allow-read --allow-write tools/perf_analyzer_options.ts parser.cc COMMIT
 *
 * writes lib/cli/testdata/perf_analyzer_options.json. A new option there fails
 * the test until the option table handles it.
 *
 * @module
 */

export interface PerfAnalyzerOptions {
  source: string;
  commit: string;
  /** getopt_long's optstring: a letter followed by ":" takes a value. */
  short_options: string;
  long_options: Array<{ name: string; has_arg: "no_argument" | "required_argument" }>;
}

/** The options that perf_analyzer's parser source declares. */
export function extractOptions(source: string, commit: string): PerfAnalyzerOptions {
  const table = /long_options\[\]\s*=\s*\{([\s\S]*?)\{0,\s*0,\s*0,\s*0\}\s*\}/.exec(source);
  const optstring = /getopt_long\(\s*argc,\s*argv,\s*"([^"]*)"/.exec(source);
  if (!table || !optstring) {
    throw new Error("No long_options table or getopt_long call found: not command_line_parser.cc");
  }
  const long_options = [...table[1].matchAll(/\{"([^"]+)",\s*(no_argument|required_argument)/g)]
    .map(([, name, hasArg]) => ({ name, has_arg: hasArg as "no_argument" | "required_argument" }));
  return {
    source: "triton-inference-server/perf_analyzer src/command_line_parser.cc",
    commit,
    short_options: optstring[1],
    long_options,
  };
}

if (import.meta.main) {
  const [path, commit] = Deno.args;
  if (!path || !commit) {
    console.error("Usage: tools/perf_analyzer_options.ts command_line_parser.cc COMMIT");
    Deno.exit(1);
  }
  const facts = extractOptions(Deno.readTextFileSync(path), commit);
  const out = new URL("../lib/cli/testdata/perf_analyzer_options.json", import.meta.url);
  Deno.writeTextFileSync(out, JSON.stringify(facts, null, 2) + "\n");
  console.log(`${facts.long_options.length} long options, "${facts.short_options}" -> ${out}`);
}
