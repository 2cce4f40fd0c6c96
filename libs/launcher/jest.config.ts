/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
export default { displayName: 'launcher', ...require('../../jest.preset.js') };
