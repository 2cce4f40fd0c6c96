export { describeHost, physicalCoreCount, projectRevision } from './host';
export type { HostInfo, ProjectRevision } from './host';
export { Launcher, pinProcess } from './launch';
export type { LaunchOptions, LaunchResult, ChildOutcome } from './launch';
export { LauncherLink, CHILD_ENV } from './ipc';
export { planCpus, readPhysicalCores } from './cpu-plan';
export type { CpuPlan } from './cpu-plan';

export { ProcessPool, serveTasks } from './process-pool';
export type { ProcessPoolOptions } from './process-pool';
export { entryModule, nodeFlagsFor } from './entry-module';
export { runNodeScript } from './run-process';
export type { ScriptExit } from './run-process';
export type { RunningProcess } from './run-process';
export { DATA_DIR, mergeJob, shardJob, shellQuote } from './k8s';
export type { ShardJobOptions } from './k8s';
export { decodeVideoToJpegs, DECODE_LIMITS } from './decode-video';
export { startBuiltinMock } from './builtin-mock';
export type { BuiltinMock } from './builtin-mock';
