import { sql as init } from './001-init.js';
import { sql as counters } from './002-counters.js';
import { sql as dataPlane } from './003-data-plane.js';
import { sql as assetFacets } from './004-asset-facets.js';
import { sql as pidStart } from './005-pid-start.js';
import { sql as webhookRuns } from './006-webhook-runs.js';
import { sql as orgs } from './007-orgs.js';
import { sql as vulnDiffs } from './008-vuln-diffs.js';
import { sql as diffWindowIndexes } from './009-diff-window-indexes.js';
import { sql as webhookKeyHash, run as hashWebhookKeys } from './010-webhook-key-hash.js';
import { sql as teamAccess } from './011-team-access.js';
import { sql as scheduleOrgs } from './012-schedule-orgs.js';
import { sql as assetPorts } from './013-asset-ports.js';
import { sql as runScope } from './015-run-scope.js';
import { sql as runAttempts } from './016-run-attempts.js';
import { sql as ownerHostLeases } from './017-owner-host-leases.js';
import { sql as statementTriggers } from './018-statement-triggers.js';
import { sql as attemptFence } from './019-attempt-fence.js';
import type { Db } from '../sql.js';

/** One schema step: applied once, in its own transaction, recorded in `schema_migrations`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Data work SQL cannot do (e.g. hashing), run after `sql` in the same transaction. */
  run?: (db: Db) => void;
  /** Removes secrets: run with secure_delete on, and the WAL truncated afterwards. */
  scrub?: boolean;
}

/** Every migration, in the order they are applied. Append only: released versions never change. */
export const migrations: readonly Migration[] = [
  { version: 1, name: 'init', sql: init },
  { version: 2, name: 'counters', sql: counters },
  { version: 3, name: 'data-plane', sql: dataPlane },
  { version: 4, name: 'asset-facets', sql: assetFacets },
  { version: 5, name: 'pid-start', sql: pidStart },
  { version: 6, name: 'webhook-runs', sql: webhookRuns },
  { version: 7, name: 'orgs', sql: orgs },
  { version: 8, name: 'vuln-diffs', sql: vulnDiffs },
  { version: 9, name: 'diff-window-indexes', sql: diffWindowIndexes },
  { version: 10, name: 'webhook-key-hash', sql: webhookKeyHash, run: hashWebhookKeys, scrub: true },
  { version: 11, name: 'team-access', sql: teamAccess },
  { version: 12, name: 'schedule-orgs', sql: scheduleOrgs },
  { version: 13, name: 'asset-ports', sql: assetPorts },
  // 14 was never used (a branch's number that did not need a migration).
  { version: 15, name: 'run-scope', sql: runScope },
  { version: 16, name: 'run-attempts', sql: runAttempts },
  { version: 17, name: 'owner-host-leases', sql: ownerHostLeases },
  { version: 18, name: 'statement-triggers', sql: statementTriggers },
  { version: 19, name: 'attempt-fence', sql: attemptFence },
];
