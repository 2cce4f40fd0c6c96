/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
// Whole runs on the wall clock: the probe against mocks in its own process (src/**/*.e2e.ts) and the
// built command in child processes (test/**/*.e2e.ts). Each test states its own bounds.
//
// Two files at a time: a whole run mostly waits on its own schedule (measured on the 2-core host:
// record, report and vllm-omni-run took 300 s of wall time and 112 s of CPU one after another), so
// two of them share the cores far from the 80 ms that makes a packet late. The files that assert the
// client's own timing exactly (`*.alone.e2e.ts`: injected stalls, CPU hogs, no loop lag over 80 ms)
// run afterwards, one at a time, with nothing beside them (jest.e2e-alone.config.ts).
export default {
  displayName: 'probe e2e',
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/src/**/*.e2e.ts', '<rootDir>/test/**/*.e2e.ts'],
  testPathIgnorePatterns: ['/node_modules/', '\\.alone\\.e2e\\.ts$'],
  maxWorkers: 2,
};
