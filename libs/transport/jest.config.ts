/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
export default { displayName: 'transport', ...require('../../jest.preset.js') };
