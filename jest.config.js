// Two projects: `unit` runs everywhere (CI has no GPU); `gpu` needs a CUDA driver and device and
// skips each suite with a one-line reason where there is none.
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }];
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': tsJest },
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.gpu\\.test\\.ts$'],
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
