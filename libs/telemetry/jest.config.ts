/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
export default { displayName: 'telemetry', ...require('../../jest.preset.js') };
