/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
// Whole runs on the wall clock: the probe against mocks in its own process (src/**/*.e2e.ts) and the
// built command in child processes (test/**/*.e2e.ts). Each test states its own bounds.
export default {
  displayName: 'probe e2e',
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/src/**/*.e2e.ts', '<rootDir>/test/**/*.e2e.ts'],
};
