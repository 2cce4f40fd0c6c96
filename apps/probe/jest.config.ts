/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
// Unit tests only; the runs against real mocks and processes are the `e2e` target (jest.e2e.config.ts).
export default { displayName: 'probe', ...require('../../jest.preset.js'), testMatch: ['<rootDir>/src/**/*.spec.ts'] };
