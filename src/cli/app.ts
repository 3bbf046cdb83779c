/** The application context of one CLI command, built from the global flags. */
import { createAppContext, type AppContext } from '../services/context.js';
import type { GlobalOptions } from './context.js';

/** Opens settings, database and workflow loader for the folders the global flags name. */
export function openApp(o: GlobalOptions): AppContext {
  return createAppContext({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
}

/** Runs `fn` with an application context and closes it afterwards. */
export function withApp<T>(o: GlobalOptions, fn: (app: AppContext) => T): T {
  const app = openApp(o);
  try {
    return fn(app);
  } finally {
    app.close();
  }
}
