/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
export default { displayName: 'pacer', ...require('../../jest.preset.js') };
