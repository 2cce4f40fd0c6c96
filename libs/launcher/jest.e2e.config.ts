/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
// Child processes on the wall clock (start gate, crashes, a slow reader), with the bounds each test
// states: they need the cores to themselves, so they run with the other e2e suites, one at a time.
export default { displayName: 'launcher e2e', ...require('../../jest.preset.js'), testMatch: ['<rootDir>/e2e/**/*.e2e.ts'] };
