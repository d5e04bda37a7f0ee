/**
 * The command line ends here: lib/cli turns argv and a --config YAML file
 * into a validated plan (lib/profile/plan.ts; each stage's part is declared
 * by that stage) or the serve command's options. It owns the option table
 * (options.ts, one file per --help section in flags/), --help, and the
 * permission hints.
 * May import lib/profile and every folder below it; only lib/sweep,
 * lib/commands and main.ts import it.
 *
 * @module
 */
export * from "./args.ts";
export * from "./config.ts";
export * from "./help.ts";
export * from "./options.ts";
export * from "./permissions.ts";
export * from "./serve_config.ts";
export * from "./yaml.ts";
