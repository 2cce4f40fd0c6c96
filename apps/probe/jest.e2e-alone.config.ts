/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
// The whole-run tests that assert the client's own timing exactly: one file at a time, after the
// others (see jest.e2e.config.ts), so no other test's run shares the cores with them.
export default {
  displayName: 'probe e2e alone',
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/src/**/*.alone.e2e.ts', '<rootDir>/test/**/*.alone.e2e.ts'],
  maxWorkers: 1,
};
