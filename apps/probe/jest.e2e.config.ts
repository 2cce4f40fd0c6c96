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
export default {
  displayName: 'probe e2e',
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/src/**/*.e2e.ts', '<rootDir>/test/**/*.e2e.ts'],
  testPathIgnorePatterns: ['/node_modules/', '\\.alone\\.e2e\\.ts$'],
  maxWorkers: 3,
};
