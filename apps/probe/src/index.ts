export { main } from './main';

export { parseRunOptions } from './run/run-options';
export type { RunOptions } from './run/run-options';
export { runCommand } from './run/run-command';
export type { RunHooks } from './run/run-command';
export { renderRunSummary } from '@duplex-bench/run';
