import { entryModule } from '@duplex-bench/launcher';

/** The module a ProcessPool starts to post-process recorded sessions. */
export const POSTPROCESS_WORKER = entryModule(__dirname, 'postprocess-worker', 'postprocess-worker');
