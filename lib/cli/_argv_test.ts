import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { mulberry32 } from "../input/generate.ts";
import { type ArgToken, tokenize, type TokenOptions } from "./_argv.ts";

const OPTIONS: TokenOptions = {
  url: { type: "string", short: "u" },
  "model-name": { type: "string", short: "m" },
  verbose: { type: "boolean", short: "v" },
  async: { type: "boolean", short: "a" },
  "input-data": { type: "string" },
  help: { type: "boolean" },
};

/** node:util's tokens in tokenize()'s form (it has no terminator token nor indexes). */
function reference(args: string[]): ArgToken[] {
  const { tokens } = parseArgs({
    args,
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  return tokens.flatMap((t): ArgToken[] => {
    if (t.kind === "option-terminator") return [];
    if (t.kind === "positional") return [{ kind: "positional", value: t.value }];
    const value = t.value === undefined ? {} : { value: t.value };
    return [{ kind: "option", name: t.name, rawName: t.rawName, ...value }];
  });
}

Deno.test("tokens of typical command lines", () => {
  assert.deepEqual(tokenize(["-m", "simple", "-vv", "--url=h:1", "extra"], OPTIONS), [
    { kind: "option", name: "model-name", rawName: "-m", value: "simple" },
    { kind: "option", name: "verbose", rawName: "-v" },
    { kind: "option", name: "verbose", rawName: "-v" },
    { kind: "option", name: "url", rawName: "--url", value: "h:1" },
    { kind: "positional", value: "extra" },
  ]);
  assert.deepEqual(tokenize(["-vmsimple", "--input-data", "-x", "--", "-v"], OPTIONS), [
    { kind: "option", name: "verbose", rawName: "-v" },
    { kind: "option", name: "model-name", rawName: "-m", value: "simple" },
    { kind: "option", name: "input-data", rawName: "--input-data", value: "-x" },
    { kind: "positional", value: "-v" },
  ]);
});

Deno.test("tokens match node:util parseArgs on random command lines", () => {
  const atoms = [
    ..."-u -m -v -a --url --model-name --verbose --input-data --help --nope -x -".split(" "),
    ..."-- --- --= --=a=b --url=x=y -vv -va -vu -vmfoo -uvx -v=1 -1 = x a=b --constructor"
      .split(" "),
    "",
  ];
  const random = mulberry32(7);
  for (let i = 0; i < 5000; i++) {
    const args = Array.from(
      { length: Math.floor(random() * 6) },
      () => atoms[Math.floor(random() * atoms.length)],
    );
    assert.deepEqual(tokenize(args, OPTIONS), reference(args), JSON.stringify(args));
  }
});
