import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Starts a worker from a module next to the caller. A `.ts` worker (source run by tsx or jest)
 * needs tsx's CommonJS hook passed explicitly: inheriting `--import tsx` is not enough
 * (ERR_UNKNOWN_FILE_EXTENSION). A built `.js` worker needs nothing.
 */
export function startWorker(file: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  const execArgv = file.endsWith('.ts') ? ['--require', 'tsx/cjs'] : [];
  return new Worker(file, { workerData, execArgv, ...(resourceLimits ? { resourceLimits } : {}) });
}
