export * from "./config.ts";
export * from "./help.ts";
export * from "./options.ts";
export * from "./permissions.ts";
export * from "./yaml.ts";
