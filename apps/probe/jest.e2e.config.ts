/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
// Whole runs on the wall clock: the probe against mocks in its own process (src/**/*.e2e.ts) and the
// built command in child processes (test/**/*.e2e.ts). Each test states its own bounds.
//
// Three files at a time: a whole run mostly waits on its own schedule (on the 2-core host: record,
// report and vllm-omni-run took 300 s of wall time and 112 s of CPU one after another; all of these
// files took 362 s two at a time and 232 s three at a time, 1.06 cores), so they share the cores.
// Sharing them makes loop lags past 80 ms now and then, so these files do not judge the cadence
// (their runs get --allow-unqualified). The files that judge it exactly (`*.alone.e2e.ts`: injected
// stalls, CPU hogs, no loop lag over 80 ms, a qualified run's exit status) run afterwards, one at a
// time, with nothing beside them (jest.e2e-alone.config.ts).
// Every socket read of a ws: connection lands in a buffer of its own, and the read before is
// overwritten with ~ as the next lands (CHECK_READS_ENV in libs/transport/src/direct-reads.ts): a
// consumer that keeps a received frame's bytes past the next read fails these suites. Set here, in
// jest's own process, so its workers and the probes they start inherit it; the alone suites, which
// judge the cadence, read as users' runs do.
process.env.DUPLEX_BENCH_CHECK_READS ??= '1';

export default {
  displayName: 'probe e2e',
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/src/**/*.e2e.ts', '<rootDir>/test/**/*.e2e.ts'],
  testPathIgnorePatterns: ['/node_modules/', '\\.alone\\.e2e\\.ts$'],
  maxWorkers: 3,
};
