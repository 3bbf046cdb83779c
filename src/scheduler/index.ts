/** The scheduler: cron, event and watch triggers that launch workflows (re-exports only). */
export { Scheduler, startScheduler, type SchedulerOptions, type TriggerInfo } from './scheduler.js';
export { triggerInfo, statusOf, workflowsOf, type Registered, type WorkflowSummary } from './registry.js';
export { liveScheduler, setLiveScheduler, schedulerRole, setSchedulerRole, type LiveScheduler, type SchedulerRole } from './live.js';
export { normaliseCron, nextCronRun, nextRuns, isValidCron, CRON_DESCRIPTORS } from './cron.js';
export { topicMatches, globToRegExp, isGlob } from './topic-match.js';
export { eventFromRecord, filtersPass, prepareEventCode, renderEventText, Deduper, type EventEnvelope } from './event-match.js';
export { resolveInput, envelopeParam, isLegacyInput, type ResolvedInput } from './input-map.js';
export { fireTrigger, recordFireFailure, type FireContext } from './fire.js';
export { specFromSchedule, specsFromWorkflow, loadWorkflowTriggers, scheduleKey, TRIGGER_TYPES, type TriggerSpec, type TriggerType, type ScheduleInputConfig } from './triggers.js';
export { checkWatchPath, watchFile } from './watch.js';
