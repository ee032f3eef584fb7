// Three projects: `unit` runs everywhere (CI has no GPU); `packaging` packs and installs the packages
// (slow: `npm run test:packaging` and .ci/run run it, `npm test` does not); `gpu` needs a CUDA driver and
// device and skips each suite with a one-line reason where there is none.
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }];
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': tsJest },
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      // The packaging test (a build and several npm installs, about a minute) is its own project.
      testPathIgnorePatterns: ['/node_modules/', '\\.gpu\\.test\\.ts$', '/test/packaging\\.test\\.ts$'],
      setupFiles: ['<rootDir>/test/setup/quiet-console.js'],
    },
    {
      displayName: 'packaging',
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': tsJest },
      testMatch: ['<rootDir>/test/packaging.test.ts'],
      setupFiles: ['<rootDir>/test/setup/quiet-console.js'],
    },
    {
      displayName: 'gpu',
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': tsJest },
      testMatch: ['<rootDir>/test/gpu/**/*.gpu.test.ts'],
    },
  ],
  testTimeout: 120000,
};
