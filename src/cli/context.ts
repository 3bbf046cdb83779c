import type { Command } from 'commander';

/** Global flags shared by every command (reference workflow-engine §5.1). */
export interface GlobalOptions {
  baseFolder?: string;
  settingsFile?: string;
  workflowFolder?: string;
  verbose?: boolean;
  debug?: boolean;
  silent?: boolean;
  json?: boolean;
  disableColor?: boolean;
  disableNotification?: boolean;
  disableLogging?: boolean;
  ciOutputFormat?: boolean;
  logFile?: string;
  logFileTmp?: boolean;
  spinner?: boolean;
  disableDb?: boolean;
  width?: string;
  force?: boolean;
  org?: string;
  skipAutoSetup?: boolean;
}

/** The global options merged with the command's own options. */
export function optionsOf<T extends object>(cmd: Command): GlobalOptions & T {
  return cmd.optsWithGlobals() as GlobalOptions & T;
}
