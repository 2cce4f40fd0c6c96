export { describeHost, physicalCoreCount, projectRevision } from './host';
export type { HostInfo, ProjectRevision } from './host';
export { parseFlags } from './flags';
export type { FlagSpecs, Parsed } from './flags';

/* Error types */
export { UsageError } from './flags';
