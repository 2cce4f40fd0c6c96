/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
// Real sockets on the wall clock, with the tolerances each test states; the same behaviour in
// virtual time, exact, is in src/*.spec.ts.
export default { displayName: 'mock-servers e2e', ...require('../../jest.preset.js'), testMatch: ['<rootDir>/e2e/**/*.e2e.ts'] };
