module.exports = { ...require('../../jest.preset.js'), displayName: require('./package.json').name };
