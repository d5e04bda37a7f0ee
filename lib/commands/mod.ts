export * from "./outcome.ts";
export * from "./profile.ts";
export * from "./serve.ts";
export * from "./sweep.ts";
