/** Settings: schema, loading, redaction, editing and hot reload (re-exports only). */
export * from './schema.js';
export * from './load.js';
export * from './paths.js';
export * from './lint.js';
export * from './redact.js';
export * from './set.js';
export * from './watch.js';
export { ensureSettingsFile, ensureStandardFolders, copySampleWorkflows, bundledWorkflowsDir } from './bootstrap.js';
export { randomSecret, SECRET_LENGTHS } from './template.js';
