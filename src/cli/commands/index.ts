import type { Command } from 'commander';

/**
 * Every top-level command registers itself here. A command module imports only commander and
 * light types; its action imports the implementation lazily so `osm --help` stays fast.
 */
export type RegisterCommand = (program: Command) => void;

export const COMMAND_MODULES: RegisterCommand[] = [];
