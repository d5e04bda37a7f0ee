/**
 * Prompt tokens of the reference server's LLM requests: a prompt token is a
 * whitespace-separated word; chat content parts are checked as a server
 * would (media count no tokens).
 */
type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export class BadRequest extends Error {
  constructor(message: string, readonly status = 400, readonly code?: string) {
    super(message);
  }
}

export function countWords(text: string): number {
  let count = 0;
  for (const word of text.split(/\s+/)) if (word !== "") count++;
  return count;
}

/**
 * A chat content part as OpenAI's API takes it (text, image_url with a URL,
 * input_audio with base64 data and its format), checked as a server would;
 * its prompt tokens: a text's words, none for media.
 */
function partTokens(part: unknown): number {
  if (!isObject(part)) throw new BadRequest("a content part must be an object");
  if (part.type === "text" && typeof part.text === "string") return countWords(part.text);
  if (part.type === "image_url") {
    const image = part.image_url;
    if (!isObject(image) || typeof image.url !== "string" || image.url === "") {
      throw new BadRequest("an image_url part needs image_url.url");
    }
    if (
      image.url.startsWith("data:") &&
      !/^data:image\/[a-z]+;base64,[A-Za-z0-9+/]+=*$/.test(image.url)
    ) {
      throw new BadRequest("an image_url data URL must be data:image/FORMAT;base64,DATA");
    }
    return 0;
  }
  if (part.type === "input_audio") {
    const audio = part.input_audio;
    if (
      !isObject(audio) || typeof audio.data !== "string" ||
      !/^[A-Za-z0-9+/]+=*$/.test(audio.data) || (audio.format !== "wav" && audio.format !== "mp3")
    ) {
      throw new BadRequest("an input_audio part needs base64 data and a format, wav or mp3");
    }
    return 0;
  }
  throw new BadRequest(`unsupported content part type ${JSON.stringify(part.type)}`);
}

/** Prompt tokens of a chat request: the words of every message's text. */
export function chatPromptTokens(body: JsonObject): number {
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new BadRequest("'messages' must be a non-empty array");
  }
  let count = 0;
  for (const message of body.messages) {
    const content = isObject(message) ? message.content : undefined;
    if (typeof content === "string") count += countWords(content);
    else if (Array.isArray(content)) {
      for (const part of content) count += partTokens(part);
    }
  }
  return count;
}

export function completionPromptTokens(body: JsonObject): number {
  const prompt = body.prompt;
  if (typeof prompt === "string") return countWords(prompt);
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === "string")) {
    return prompt.reduce((n: number, p: string) => n + countWords(p), 0);
  }
  throw new BadRequest("'prompt' must be a string or an array of strings");
}
