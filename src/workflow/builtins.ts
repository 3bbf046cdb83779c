/**
 * Names of the variables the engine injects into every module/flow execution (reference
 * workflow-engine §2.3, §2.4). The linter uses this list to tell undefined variables apart; the
 * engine's builtin builder (params.ts) must produce exactly these names.
 */
export const BUILTIN_VARIABLE_NAMES = [
  // folders
  'BaseFolder', 'Binaries', 'Data', 'ExternalData', 'ExternalConfigs', 'ExternalAgentConfigs', 'ExternalAgents',
  'ExternalScripts', 'Workflows', 'MarkdownTemplates', 'ExternalMarkdowns', 'SnapshotsFolder', 'Workspaces',
  // tactic
  'threads', 'baseThreads',
  // platform
  'Version', 'PlatformOS', 'PlatformArch', 'PlatformInDocker', 'PlatformInKubernetes', 'PlatformCloudProvider',
  // target and workspace
  'Target', 'TargetFile', 'TargetSpace', 'Workspace', 'HeuristicsCheck', 'Output',
  'StateExecutionLog', 'StateConsoleLog', 'StateCompletedFile', 'StateFile', 'StateWorkflowFile', 'StateWorkflowFolder',
  // run
  'ModuleName', 'FlowName', 'TaskDate', 'Today', 'CurrentTime', 'TimeStamp', 'RunUUID', 'DBRunID', 'RandomString',
  'TempDir', 'TempFile', 'HooksEnabled',
  // chunk mode
  'ChunkIndex', 'ChunkSize', 'TotalChunks', 'ChunkStart', 'ChunkEnd',
  // event-triggered runs
  'EventEnvelope', 'EventTopic', 'EventSource', 'EventDataType', 'EventTimestamp', 'EventData',
  // heuristics (§2.4)
  'TargetType', 'TargetBaseURL', 'TargetRootURL', 'TargetHostname', 'TargetRootDomain', 'TargetTLD', 'TargetSLD',
  'Org', 'TargetHost', 'TargetPort', 'TargetPath', 'TargetFileExt', 'TargetScheme', 'TargetRepoSlug',
  'TargetStatusCode', 'TargetContentLength', 'TargetIsWildcard', 'TargetResolvedIP',
  // params the CLI always passes (lower-case)
  'target', 'target_file', 'tactic', 'threads_hold', 'exclude_modules', 'fuzzy_exclude_modules', 'space_name',
  'workspaces_folder', 'heuristics_check', 'flow_name',
] as const;

export const BUILTIN_VARIABLES: ReadonlySet<string> = new Set(BUILTIN_VARIABLE_NAMES);
