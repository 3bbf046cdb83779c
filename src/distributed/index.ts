/** Distributed mode on BullMQ: the master (`osm serve --master`) and workers (`osm worker join`). */
export { attachMaster, detachMaster, masterOf, startMaster, type StartMasterOptions } from './attach.js';
export { DistributedMaster, taskDataOf, type MasterOptions, type TaskLists } from './master.js';
export { DistributedWorker, isValidWorkerName, type WorkerOptions } from './worker.js';
export { parseRedisUrl, resolveDistributedConfig, resolvePrefix, resolveRedisTarget, pingRedis, connectionOptions, type DistributedConfig, type RedisTarget } from './redis-config.js';
export { QUEUE_NAME, DEFAULT_PREFIX, HEARTBEAT_MS, OFFLINE_AFTER_MS, SCHEDULER_LOCK_TTL_MS, schedulerLeaderKey } from './keys.js';
export { SchedulerLeader, startLeaderScheduler, type LeaderOptions } from './scheduler-leader.js';
export type { WorkerView, WorkerStatus } from './worker-registry.js';
export type { TaskView, TaskStatus } from './task-view.js';
