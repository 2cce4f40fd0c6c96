/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
export default { displayName: 'tracer', ...require('../../jest.preset.js') };
