/**
 * What the dataset readers make: conversations of user turns; and the
 * dataset types (--custom-dataset-type, --public-dataset), here apart from
 * their readers so that the option table names them without loading those.
 */

/** The formats --input-file reads. */
export const DATASET_TYPES = [
  "single_turn",
  "multi_turn",
  "random_pool",
  "mooncake_trace",
  "burstgpt_trace",
  "azure_trace",
  "raw_payload",
  "aiperf_inputs",
  "sharegpt",
] as const;
export type DatasetType = typeof DATASET_TYPES[number];

/** A user turn of a conversation, before it becomes a request body. */
export interface TurnSpec {
  /** The user message: one text, or several (sent as content parts). */
  texts: string[];
  /** AIPerf's "delay": the ms to wait before this turn goes (after the previous answer). */
  delayBeforeMs?: number;
  /** When the turn is due (--fixed-schedule), ms. */
  timestampMs?: number;
  /** The answer's length asked for (max_tokens). */
  maxTokens?: number;
  /** The chat message's role (a file's "role"); default "user". */
  role?: string;
  /** A replayed payload (raw_payload, aiperf_inputs): the request body as written. */
  body?: Record<string, unknown>;
  /** Where it comes from, for messages. */
  where: string;
}

export interface Conversation {
  sessionId: string;
  turns: TurnSpec[];
}
